package dev.iwarp.server;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.iwarp.server.ToolRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Help grouped by section from one table, three examples per command, and {@code help [command]}. */
class HelpSectionsTest {

    private static CommandLine commands() {
        CommandLine cl = new CommandLine(new Main());
        HelpSections.install(cl);
        return cl;
    }

    /** A new option of any command must be given a heading in HelpSections.SECTION_OF. */
    @Test
    void everyOptionOfEveryCommandHasASection() {
        List<String> missing = new ArrayList<>();
        for (Map.Entry<String, CommandLine> e : commands().getSubcommands().entrySet()) {
            for (OptionSpec o : e.getValue().getCommandSpec().options()) {
                if (!o.hidden() && HelpSections.sectionOf(o).equals(HelpSections.OTHER)) {
                    missing.add(e.getKey() + " " + o.longestName());
                }
            }
        }
        assertEquals(List.of(), missing, "options in no help section: add them to HelpSections.SECTION_OF");
    }

    /** Every command but help has three examples, each of which the command line accepts. */
    @Test
    void everyCommandHasThreeExamplesThatParse() {
        for (Map.Entry<String, CommandLine> e : commands().getSubcommands().entrySet()) {
            if (e.getKey().equals("help")) {
                continue;
            }
            List<String[]> examples = HelpSections.EXAMPLES.get(e.getKey());
            assertTrue(examples != null && examples.size() == 3, e.getKey() + ": three examples");
            for (String[] ex : examples) {
                CommandLine fresh = new CommandLine(new Main());
                String[] args = ex[1].split(" ");
                fresh.parseArgs(args); // throws on an unknown option or bad value
                assertEquals(e.getKey(), args[0]);
            }
        }
    }

    @Test
    void helpCommandPrintsTheCommandsHelpGroupedWithExamples() {
        ToolRun help = run("help", "serve");
        assertEquals(0, help.code(), help.err());
        ToolRun dashH = run("serve", "--help");
        assertEquals(dashH.out(), help.out());
        String out = help.out();
        assertTrue(out.startsWith("Usage: iwarp-server serve [OPTIONS]\n"), out);
        int last = -1;
        for (String heading : List.of("Connection:", "What to run:", "MPA:", "TLS (MPA inside TLS 1.3):",
                "VI/TCP (--wire vitcp):", "IFT (--wire ift):", "SCTP (--wire sctp):",
                "Limits (what one peer can make us hold):", "Output and diagnostics:", "General:", "Examples:")) {
            int at = out.indexOf("\n" + heading + "\n");
            assertTrue(at > last, heading + " in order in:\n" + out);
            last = at;
        }
        assertTrue(out.contains("""

                Examples:
                  Serve on this host only (loopback), MPA on port 7174:
                    iwarp-server serve --address 127.0.0.1
                  Serve inside TLS, admitting only clients holding the pre-shared key:
                    iwarp-server serve --tls --psk-file psk.txt
                  Serve VI/TCP on its default port 7175:
                    iwarp-server serve --wire vitcp --address 127.0.0.1
                """), out);
        assertTrue(!out.contains("Other options:"), out);
    }

    @Test
    void helpOfAnUnknownCommandIsAUsageError() {
        ToolRun r = run("help", "nosuch");
        assertEquals(2, r.code());
        assertEquals("iwarp-server: Unknown subcommand 'nosuch'. (see iwarp-server --help)\n", r.err());
    }
}
