package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The doc test: every sample block in the READMEs and this module's pages under docs/ ({@link DocFiles}) marked {@code <!-- doc-test -->} (no server) or
 * {@code <!-- doc-test: serve -->} / {@code <!-- doc-test: serve --wire ift -->} (a default serve of that wire on
 * loopback) is run command by command ({@code $ java -jar iwarp-server.jar ARGS}, in-process; a peer
 * {@code 127.0.0.1[:PORT]} is pointed at that serve) and what the command prints (stdout, then stderr) must equal the
 * lines under it after one normalisation on both sides: {@code 127.0.0.1:<port>} becomes {@code 127.0.0.1:PORT} and
 * {@code in <figure> ms} becomes {@code in N ms}. A command ending {@code 2>/dev/null} is compared on its stdout alone.
 * So a sample cannot drift from what the program prints.
 */
class ReadmeSamplesTest {
    private static final String MARK = "<!-- doc-test";
    private static final String PROMPT = "$ java -jar iwarp-server.jar ";

    /** Masks ports, times, IFT's VTags (random per connection) and Netty's channel ids in a log line. */
    static String normalise(String line) {
        return line.replaceAll("127\\.0\\.0\\.1:\\d+", "127.0.0.1:PORT").replaceAll(" in \\d+(\\.\\d+)? ms", " in N ms")
                .replaceAll("VTag 0x[0-9A-F]{4} peer 0x[0-9A-F]{4}", "VTag 0xVTAG peer 0xVTAG")
                .replaceAll("\\[id: 0x[0-9a-f]{8}, ", "[id: 0xID, ")
                .stripTrailing();
    }

    static final String FIGURES = ", figures masked";

    /**
     * A bench sample's line with its measured figures masked (marker {@code <!-- doc-test: serve, figures masked -->}):
     * every decimal figure becomes {@code N.N} and runs of blanks one blank (a figure's width moves the columns), the
     * allocation figures {@code N}, the machine and warm-up lines keep only their label; null (left out on both
     * sides) for the once-a-second progress lines, whose number depends on the speed.
     */
    static String maskFigures(String line) {
        if (line.matches("^bench: +\\d+ s .*")) {
            return null;
        }
        return line.replaceAll("^( (Machine|Warm-up took) +:).*", "$1 M").replaceAll("(?<![\\w.])\\d+\\.\\d+(?![\\w.])", "N.N")
                .replaceAll("\\d+ bytes allocated", "N bytes allocated").replaceAll("MULPDU \\d+", "MULPDU N")
                .replaceAll(" +", " ").stripTrailing();
    }

    /** ARGS of a sample's command line: split at blanks, '...' quoted, a trailing "# comment" left out. */
    static List<String> args(String commandLine) {
        List<String> a = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        boolean any = false;
        for (char c : commandLine.toCharArray()) {
            if (c == '\'') {
                quoted = !quoted;
                any = true;
            } else if (c == '#' && !quoted && cur.length() == 0) {
                break;
            } else if (c == ' ' && !quoted) {
                if (any) {
                    a.add(cur.toString());
                }
                cur.setLength(0);
                any = false;
            } else {
                cur.append(c);
                any = true;
            }
        }
        if (any) {
            a.add(cur.toString());
        }
        return a;
    }

    private record Sample(String readme, int line, String server, List<String> command, List<String> expected) {
    }

    private static List<Sample> samples(Path readme) throws Exception {
        List<String> lines = Files.readAllLines(readme);
        List<Sample> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i).trim();
            if (!l.startsWith(MARK) || l.startsWith(ReadmeServeLogTest.MARK) || l.startsWith(ReadmeOtherSamplesTest.MARK)) {
                continue;
            }
            String server = l.substring(MARK.length()).replace("-->", "").replace(":", "").trim();
            int j = i + 1;
            while (!lines.get(j).startsWith("```")) {
                j++;
            }
            for (j++; !lines.get(j).startsWith("```"); ) {
                String cmd = lines.get(j);
                assertTrue(cmd.startsWith(PROMPT), readme + ":" + (j + 1) + " is not a command: " + cmd);
                int at = j + 1;
                List<String> expected = new ArrayList<>();
                for (j++; !lines.get(j).startsWith("```") && !lines.get(j).startsWith("$ "); j++) {
                    String e = normalise(lines.get(j));
                    e = server.endsWith(FIGURES) ? maskFigures(e) : e;
                    if (e != null) {
                        expected.add(e);
                    }
                }
                out.add(new Sample(readme.toString(), at, server, args(cmd.substring(PROMPT.length())), expected));
            }
            i = j;
        }
        return out;
    }

    private static RpingServer serve(String marker) throws Exception {
        String kind = marker.replace(FIGURES, "");
        ServerConfig config = ServerConfig.defaults().withAddress("127.0.0.1", 0);
        if (kind.equals("serve --wire vitcp")) {
            WireOptions wire = new WireOptions(); // as serve --wire vitcp: the CRC option offered, the client decides
            new picocli.CommandLine(wire).parseArgs("--wire", "vitcp");
            return RpingServer.start(config, ServeOptions.on(dev.iwarp.server.wire.VitcpWire.server(wire.vitcpConfig(true, 16).build(),
                    wire.discriminatorOctets(), false, 2)));
        }
        if (kind.equals("serve --wire ift")) {
            WireOptions wire = new WireOptions();
            new picocli.CommandLine(wire).parseArgs("--wire", "ift");
            return RpingServer.start(config, ServeOptions.on(IwarpStack.builder().threads(1).build())
                    .framing(wire.ift.framing(config.startupTimeoutMs(), config.ird(), config.ord())));
        }
        assertEquals("serve", kind, "unknown doc-test server");
        return RpingServer.start(config, ServeOptions.on(IwarpStack.builder().threads(1).build()));
    }

    private static List<String> run(Sample s, int port) {
        List<String> args = new ArrayList<>();
        for (String a : s.command()) {
            args.add(port > 0 && a.matches("127\\.0\\.0\\.1(:\\d+)?") ? "127.0.0.1:" + port : a);
        }
        boolean stdoutOnly = args.remove("2>/dev/null"); // the sample shows stdout alone
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(args.toArray(new String[0]), new PrintWriter(out, true), new PrintWriter(err, true));
        if (stdoutOnly && code != 0) {
            return List.of("exit " + code + ": " + err); // what the sample cannot show says why
        }
        List<String> got = new ArrayList<>();
        boolean figures = s.server().endsWith(FIGURES);
        (out.toString() + (stdoutOnly ? "" : err)).lines().map(ReadmeSamplesTest::normalise).map(l -> figures ? maskFigures(l) : l)
                .filter(java.util.Objects::nonNull).forEach(got::add);
        return got;
    }

    @Test
    void markedSamplesAreWhatTheCommandsPrint() throws Exception {
        List<Sample> all = new ArrayList<>();
        for (Path doc : DocFiles.all()) {
            all.addAll(samples(doc));
        }
        assertTrue(all.size() >= 10, "marked samples found: " + all.size());
        for (Sample s : all) {
            if (s.server().isEmpty()) {
                assertEquals(s.expected(), run(s, 0), s.readme() + ":" + s.line() + " " + s.command());
                continue;
            }
            try (RpingServer server = serve(s.server())) {
                assertEquals(s.expected(), run(s, server.port()), s.readme() + ":" + s.line() + " " + s.command());
            }
        }
    }

    @Test
    void theNormalisationAndTheArguments() {
        assertEquals("3/3 pings of 100 octets verified with 127.0.0.1:PORT in N ms",
                normalise("3/3 pings of 100 octets verified with 127.0.0.1:41234 in 948.6 ms"));
        assertEquals(List.of("ping", "[::1", "-C", "1"), args("ping '[::1' -C 1   # comment"));
        assertEquals("connected: IFT node A, VTag 0xVTAG peer 0xVTAG, IRD 1",
                normalise("connected: IFT node A, VTag 0xEBB6 peer 0x458C, IRD 1"));
    }
}
