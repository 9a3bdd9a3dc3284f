package dev.iwarp.server;

import picocli.CommandLine;
import picocli.CommandLine.Help;
import picocli.CommandLine.Model.OptionSpec;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The options of every command's help, grouped under headings from one table ({@link #SECTION_OF}, option
 * name to heading), and three examples at the end of each command's help. The option fields stay where they
 * are declared: grouping is the help's business, not the parser's. An option missing from the table is
 * listed under "Other options" (and a test fails), so a new option is never hidden from help.
 */
final class HelpSections {
    static final String CONNECTION = "Connection";
    static final String RUN = "What to run";
    static final String MPA = "MPA";
    static final String TLS = "TLS (MPA inside TLS 1.3)";
    static final String VITCP = "VI/TCP (--wire vitcp)";
    static final String IFT = "IFT (--wire ift)";
    static final String SCTP = "SCTP (--wire sctp)";
    static final String LIMITS = "Limits (what one peer can make us hold)";
    static final String OUTPUT = "Output and diagnostics";
    static final String GENERAL = "General";
    static final String IGNORED = "Accepted and ignored (perftest's own, meaningless here)";
    static final String OTHER = "Other options";

    /** Headings in the order help shows them; a heading with no option in a command is left out. */
    static final List<String> ORDER = List.of(CONNECTION, RUN, MPA, TLS, VITCP, IFT, SCTP, LIMITS, OUTPUT, IGNORED,
            GENERAL);

    /** Every option's heading, by its longest name (the same name means the same thing in every command). */
    static final Map<String, String> SECTION_OF = Map.ofEntries(
            Map.entry("--address", CONNECTION), Map.entry("--port", CONNECTION), Map.entry("-a", CONNECTION),
            Map.entry("-p", CONNECTION), Map.entry("--wire", CONNECTION), Map.entry("--timeout", CONNECTION),
            Map.entry("--startup-timeout", CONNECTION),

            Map.entry("--case", RUN), Map.entry("--connections", RUN), Map.entry("--count", RUN),
            Map.entry("--depth", RUN), Map.entry("--cq-mod", RUN), Map.entry("--duration", RUN),
            Map.entry("--iterations", RUN),
            Map.entry("--op", RUN), Map.entry("--size", RUN), Map.entry("--recv-size", RUN),
            Map.entry("--verify", RUN), Map.entry("--warmup", RUN), Map.entry("--warmup-max", RUN),
            Map.entry("--no-server-cost", RUN), Map.entry("--transport", CONNECTION), Map.entry("-C", RUN), Map.entry("-S", RUN),
            Map.entry("-V", RUN), Map.entry("-v", RUN), Map.entry("--echo", RUN), Map.entry("--target-size", RUN),
            Map.entry("--shared-target", RUN),

            Map.entry("--crc", MPA), Map.entry("--markers", MPA), Map.entry("--allow-markers", MPA),
            Map.entry("--mpa-rev", MPA), Map.entry("--p2p", MPA), Map.entry("--ird", MPA), Map.entry("--ord", MPA),

            Map.entry("--tls", TLS), Map.entry("--cert", TLS), Map.entry("--key", TLS), Map.entry("--trust", TLS),
            Map.entry("--pin", TLS), Map.entry("--psk-file", TLS), Map.entry("--psk-env", TLS),
            Map.entry("--tls-name", TLS), Map.entry("--tls-handshake-rate", TLS),

            Map.entry("--reliability", VITCP), Map.entry("--mtu", VITCP), Map.entry("--crc-mode", VITCP),
            Map.entry("--discriminator", VITCP), Map.entry("--read-window", VITCP),

            Map.entry("--ift-check-crc", IFT), Map.entry("--ift-require-checked", IFT),
            Map.entry("--ift-require-crc", IFT), Map.entry("--ift-send-crc", IFT), Map.entry("--ift-vtag", IFT),

            Map.entry("--sctp-indication", SCTP), Map.entry("--sctp-local-indication", SCTP),
            Map.entry("--sctp-max-chunk", SCTP), Map.entry("--bind", SCTP),

            Map.entry("--max-connections", LIMITS), Map.entry("--max-per-source", LIMITS),
            Map.entry("--max-read-size", LIMITS), Map.entry("--max-startups", LIMITS),
            Map.entry("--message-deadline", LIMITS), Map.entry("--idle-timeout", LIMITS),
            // the names other work agreed to add (bounded resources); listed here so their help is grouped
            Map.entry("--memory-budget", LIMITS), Map.entry("--read-rate", LIMITS),
            Map.entry("--source-prefix-v4", LIMITS), Map.entry("--source-prefix-v6", LIMITS),
            Map.entry("--max-startups-per-source", LIMITS), Map.entry("--first-octet-timeout", LIMITS),
            Map.entry("--drain-timeout", LIMITS),

            Map.entry("--pcap", OUTPUT), Map.entry("--trace", OUTPUT), Map.entry("--output", OUTPUT),
            Map.entry("--hist", OUTPUT), Map.entry("--metrics-port", OUTPUT), Map.entry("--log-format", OUTPUT),
            Map.entry("--log-level", OUTPUT), Map.entry("--metrics-address", OUTPUT), Map.entry("--jmx", OUTPUT), Map.entry("--verbose", OUTPUT), Map.entry("--quiet", OUTPUT),

            Map.entry("--help", GENERAL), Map.entry("--version", GENERAL));

    /**
     * Where perftest's commands (named as perftest names them) put an option whose name means something else in
     * the other commands ({@code --bind} is SCTP's there), and their own options.
     */
    static final Map<String, String> PERFTEST_SECTION_OF = Map.ofEntries(
            Map.entry("--rdma_cm", CONNECTION), Map.entry("--bind", CONNECTION),
            Map.entry("--iters", RUN), Map.entry("--all", RUN), Map.entry("--tx-depth", RUN),
            Map.entry("--rx-depth", RUN), Map.entry("--qp", RUN), Map.entry("--outs", RUN),
            Map.entry("--report_gbits", OUTPUT), Map.entry("--CPU-freq", IGNORED), Map.entry("--ib-dev", IGNORED));

    /** Three examples per command: what it does, then the command line. */
    static final Map<String, List<String[]>> EXAMPLES = Map.ofEntries(
            Map.entry("serve", List.of(
                    new String[] {"Serve on this host only (loopback), MPA on port 7174:",
                            "serve --address 127.0.0.1"},
                    new String[] {"Serve inside TLS, admitting only clients holding the pre-shared key:",
                            "serve --tls --psk-file psk.txt"},
                    new String[] {"Serve VI/TCP on its default port 7175:", "serve --wire vitcp --address 127.0.0.1"})),
            Map.entry("ping", List.of(
                    new String[] {"Three pings, each one's data shown and checked:", "ping 127.0.0.1 -C 3 -v -V"},
                    new String[] {"Against a Linux rping server, with CRC on:", "ping -a 192.0.2.7 -p 7174 --crc"},
                    new String[] {"Over VI/TCP against serve --wire vitcp:", "ping --wire vitcp 127.0.0.1"})),
            Map.entry("demo", List.of(
                    new String[] {"A server and a client in one process:", "demo"},
                    new String[] {"The same inside TLS (a self-signed certificate, pinned):", "demo --tls"},
                    new String[] {"Over IFT, the traffic written to a pcap file:", "demo --wire ift --pcap demo.pcap"})),
            Map.entry("bench", List.of(
                    new String[] {"RDMA Writes of 64 KiB for 10 s:", "bench 127.0.0.1 --op write --duration 10"},
                    new String[] {"RDMA Reads on 4 connections, one JSON record:",
                            "bench 127.0.0.1 --op read --connections 4 --output json"},
                    new String[] {"Sends of 1 KiB, every octet checked:", "bench 127.0.0.1 --op send --size 1024 --verify"})),
            Map.entry("probe", List.of(
                    new String[] {"RDMA Write to an STag nobody advertised (expects Terminate 1/1/0x00):",
                            "probe 127.0.0.1 --case write-invalid-stag"},
                    new String[] {"A Send longer than any posted receive:", "probe 127.0.0.1 --case send-too-long"},
                    new String[] {"The same Read violation over IFT:", "probe --wire ift 127.0.0.1 --case read-invalid-stag"})),
            Map.entry("sendrecv", List.of(
                    new String[] {"Against serve --echo (a default serve reads 16-octet Sends as rping advertisements):",
                            "sendrecv 127.0.0.1"},
                    new String[] {"Against librdmacm's rdma_server (port 7471):", "sendrecv 192.0.2.7:7471"},
                    new String[] {"Ten Sends of 4 KiB:", "sendrecv 127.0.0.1 --count 10 --size 4096"})),
            perftest("ib_write_bw", "RDMA Write bandwidth"), perftest("ib_read_bw", "RDMA Read bandwidth"),
            perftest("ib_send_bw", "Send bandwidth"), perftest("ib_write_lat", "RDMA Write latency"),
            perftest("ib_read_lat", "RDMA Read latency"), perftest("ib_send_lat", "Send latency"));

    /** A perftest command's three examples: server, client, and every size. */
    private static Map.Entry<String, List<String[]>> perftest(String name, String what) {
        return Map.entry(name, List.of(
                new String[] {"Server for a stock or our " + name + " client (port 18515):", name + " -R"},
                new String[] {what + " against that server, 4 KiB messages:", name + " -R -s 4096 127.0.0.1"},
                new String[] {"Every size from 2 octets to 8 MiB, against our own server:", name + " -R -a 127.0.0.1"}));
    }

    static final String SECTION_KEY_EXAMPLES = "examples";

    private HelpSections() {
    }

    /** Installs the grouped option list and the examples in every subcommand of {@code top}. */
    static void install(CommandLine top) {
        for (Map.Entry<String, CommandLine> e : top.getSubcommands().entrySet()) {
            CommandLine sub = e.getValue();
            // "Usage: iwarp-server serve [OPTIONS]": the options follow, grouped
            sub.getCommandSpec().usageMessage().abbreviateSynopsis(true);
            Map<String, CommandLine.IHelpSectionRenderer> sections = sub.getHelpSectionMap();
            sections.put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_OPTION_LIST_HEADING, help -> "");
            sections.put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_OPTION_LIST, HelpSections::groupedOptions);
            List<String[]> examples = EXAMPLES.get(e.getKey());
            if (examples == null) {
                continue;
            }
            sections.put(SECTION_KEY_EXAMPLES, help -> examples(top.getCommandName(), examples));
            List<String> keys = new ArrayList<>(sub.getHelpSectionKeys());
            int footer = keys.indexOf(CommandLine.Model.UsageMessageSpec.SECTION_KEY_FOOTER_HEADING);
            keys.add(footer < 0 ? keys.size() : footer, SECTION_KEY_EXAMPLES);
            sub.setHelpSectionKeys(keys);
        }
    }

    /** The heading of {@code option}, or {@link #OTHER} when the table does not name it. */
    static String sectionOf(OptionSpec option) {
        CommandLine.Model.CommandSpec command = option.command();
        if (command != null && command.name().startsWith("ib_")) {
            String s = PERFTEST_SECTION_OF.get(option.longestName());
            if (s != null) {
                return s;
            }
        }
        return SECTION_OF.getOrDefault(option.longestName(), OTHER);
    }

    private static String groupedOptions(Help help) {
        Map<String, List<OptionSpec>> bySection = new LinkedHashMap<>();
        for (String s : ORDER) {
            bySection.put(s, new ArrayList<>());
        }
        bySection.put(OTHER, new ArrayList<>());
        for (OptionSpec o : help.commandSpec().options()) {
            if (!o.hidden()) {
                bySection.get(sectionOf(o)).add(o);
            }
        }
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, List<OptionSpec>> s : bySection.entrySet()) {
            if (!s.getValue().isEmpty()) {
                sb.append(String.format("%n%s:%n", s.getKey())).append(help.optionListExcludingGroups(s.getValue()));
            }
        }
        return sb.toString();
    }

    private static String examples(String top, List<String[]> examples) {
        StringBuilder sb = new StringBuilder(String.format("%nExamples:%n"));
        for (String[] ex : examples) {
            sb.append(String.format("  %s%n    %s %s%n", ex[0], top, ex[1]));
        }
        return sb.toString();
    }
}
