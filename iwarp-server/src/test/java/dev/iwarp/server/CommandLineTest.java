package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.iwarp.server.ToolRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The command line as a user meets it: exit codes and the text printed for versions, bad values, bad peers, busy
 * ports, pcap paths, help texts and rping's spellings. Nothing here may connect unless the case says so.
 */
class CommandLineTest {
    /** Exit 2 and exactly one line on stderr, which contains {@code expected}. */
    static void assertUsageError(ToolRun r, String expected) {
        assertEquals(2, r.code(), r.toString());
        assertEquals("", r.out(), r.toString());
        assertEquals(1, r.err().lines().count(), "one line: " + r.err());
        assertTrue(r.err().contains(expected), "expected \"" + expected + "\" in: " + r.err());
    }

    @Test
    void versionComesFromTheBuild() {
        String built = System.getProperty("iwarp.project.version");
        assertNotNull(built, "surefire passes the pom's version");
        ToolRun r = run("--version");
        assertEquals(0, r.code());
        assertEquals("iwarp-server " + built, r.out().strip());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"serve -V", "demo -V", "bench -V 127.0.0.1", "probe --case markers -V 127.0.0.1",
            "sendrecv -V 127.0.0.1", "ping --version 127.0.0.1", "serve --version", "bench --version 127.0.0.1"})
    void noVersionOptionOnSubcommands(String line) {
        String[] args = line.split(" ");
        String option = line.contains("--version") ? "--version" : "-V";
        assertUsageError(run(args), args[0] + ": Unknown option: '" + option + "'");
    }

    @Test
    void aTopLevelDashVIsServesAndServeRefusesIt() {
        assertUsageError(run("-V"), "serve: Unknown option: '-V'");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "ping -C -5 127.0.0.1          | ping: -C must be >= 1, not -5",
            "ping -C 0 127.0.0.1           | ping: -C must be >= 1, not 0",
            "ping -S 25 127.0.0.1          | ping: -S must be in 26..65535, not 25",
            "ping -S 65536 127.0.0.1       | ping: -S must be in 26..65535, not 65536",
            "ping --timeout -5 127.0.0.1   | ping: --timeout must be >= 1, not -5",
            "ping --mpa-rev 3 127.0.0.1    | ping: --mpa-rev must be in 1..2, not 3",
            "ping -a 127.0.0.1 -p 0        | ping: -p must be in 1..65535, not 0",
            "ping -a 127.0.0.1 -p 65536    | ping: -p must be in 1..65535, not 65536",
            "ping --wire vitcp --mtu 0 127.0.0.1 | ping: --mtu must be in 1..65495, not 0",
            "serve --port 70000            | serve: --port must be in 0..65535, not 70000",
            "serve --port -1               | serve: --port must be in 0..65535, not -1",
            "serve --mpa-rev 0             | serve: --mpa-rev must be in 1..2, not 0",
            "serve --ird 16384             | serve: --ird must be in 0..16383, not 16384",
            "serve --ord -1                | serve: --ord must be in 0..16383, not -1",
            "serve --startup-timeout 0     | serve: --startup-timeout must be >= 1, not 0",
            "serve --idle-timeout -1       | serve: --idle-timeout must be >= 0, not -1",
            "serve --max-connections -1    | serve: --max-connections must be >= 0, not -1",
            "serve --target-size -1        | serve: --target-size must be >= 0, not -1",
            "serve --read-window 65536     | serve: --read-window must be in 0..65535, not 65536",
            "--port 99999                  | serve: --port must be in 0..65535, not 99999",
            "sendrecv --count 0 127.0.0.1  | sendrecv: --count must be >= 1, not 0",
            "sendrecv --size -1 127.0.0.1  | sendrecv: --size must be >= 0, not -1",
            "sendrecv --recv-size 0 127.0.0.1 | sendrecv: --recv-size must be >= 1, not 0",
            "sendrecv --timeout 0 127.0.0.1 | sendrecv: --timeout must be >= 1, not 0",
            "probe --case markers --size 0 127.0.0.1 | probe: --size must be >= 1, not 0",
            "probe --case markers --timeout -1 127.0.0.1 | probe: --timeout must be >= 1, not -1",
    })
    void numericOptionsOutOfRangeAreUsageErrors(String line, String expected) {
        ToolRun r = run(line.trim().split(" +"));
        assertUsageError(r, expected);
        assertTrue(r.err().strip().endsWith("--help)"), r.err());
    }

    @Test
    void benchChecksItsHistogramFileBeforeItConnects() {
        // port 1: nothing listens there, so a check that came after connecting would fail with exit 1 instead
        ToolRun r = run("bench", "127.0.0.1:1", "--hist", "/nonexistent/dir/h.hgrm", "--iterations", "10");
        assertEquals(2, r.code(), r.toString());
        assertEquals("", r.out(), r.toString());
        assertEquals("bench: --hist: directory /nonexistent/dir does not exist", r.err().strip());
    }

    @Test
    void anUnknownProbeCaseNamesTheCasesOnceWithoutAJavaClass() {
        ToolRun r = run("probe", "127.0.0.1", "--case", "nosuch");
        assertUsageError(r, "probe: Invalid value for option '--case': expected one of [write-invalid-stag, "
                + "read-invalid-stag, send-too-long, markers] but was 'nosuch' (see iwarp-server probe --help)");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "ping 127.0.0.1:abc            | ping: '127.0.0.1:abc': the port 'abc' is not a number 1..65535",
            "ping 127.0.0.1:70000          | ping: '127.0.0.1:70000': port 70000 is not in 1..65535",
            "ping 127.0.0.1:0              | ping: '127.0.0.1:0': port 0 is not in 1..65535",
            "ping [::1                     | ping: '[::1': missing ']' after the IPv6 address",
            "ping [::1]7174                | ping: '[::1]7174': expected :PORT after ']'",
            "ping :7174                    | ping: ':7174': no host before ':'",
            "ping host.invalid             | ping: unknown host 'host.invalid'",
            "ping                          | ping: no host given: HOST[:PORT] or -a HOST [-p PORT]",
            "ping -a 127.0.0.1 127.0.0.1   | ping: give the host once",
            "ping -a 127.0.0.1 -p 1 127.0.0.1 | ping: give the host once",
            "ping -p 7174 127.0.0.1:7174   | ping: give the port once",
            "sendrecv 127.0.0.1:abc        | sendrecv: '127.0.0.1:abc': the port 'abc' is not a number",
            "sendrecv host.invalid         | sendrecv: unknown host 'host.invalid'",
            "probe --case markers [::1     | probe: '[::1': missing ']'",
            "bench 127.0.0.1:x             | '127.0.0.1:x': the port 'x' is not a number",
            "serve --address host.invalid  | serve: --address: unknown host 'host.invalid'",
    })
    void badPeersAreSaidInWords(String line, String expected) {
        ToolRun r = run(line.trim().split(" +"));
        assertTrue(r.code() == 2 || line.startsWith("bench") && r.code() != 0, r.toString());
        assertTrue(r.err().contains(expected), "expected \"" + expected + "\" in: " + r);
        assertEquals(1, r.err().lines().count(), r.err());
    }

    @ParameterizedTest(name = "{0} --pcap in a missing directory")
    @ValueSource(strings = {"serve", "demo"})
    void pcapInAMissingDirectory(String command, @TempDir Path dir) {
        Path file = dir.resolve("missing").resolve("x.pcap");
        ToolRun r = run(command, "--pcap", file.toString());
        assertUsageError(r, command + ": --pcap: directory " + file.getParent() + " does not exist");
    }

    @Test
    void aBusyPortIsNamed() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            ToolRun r = assertTimeoutPreemptively(Duration.ofSeconds(30),
                    () -> run("serve", "--address", "127.0.0.1", "--port", Integer.toString(port)));
            assertEquals(1, r.code(), r.toString());
            assertEquals("serve: port " + port + " is already in use on 127.0.0.1 "
                    + "(another server running? choose one with --port)", r.err().strip());
        }
    }

    @Test
    void pingTakesRpingsSpellingAndValidatesWithCapitalV() throws Exception {
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()))) {
            String port = Integer.toString(server.localAddress().getPort());
            ToolRun validated = run("ping", "-a", "127.0.0.1", "-p", port, "-C", "3", "-V");
            assertEquals(0, validated.code(), validated.toString());
            assertTrue(validated.out().contains("3/3 pings of 64 octets verified with 127.0.0.1:" + port),
                    validated.out());
            assertFalse(validated.out().contains("ping data:"), "-V validates, -v displays");

            ToolRun displayed = run("ping", "[127.0.0.1]:" + port, "-C", "2", "-v");
            assertEquals(0, displayed.code(), displayed.toString());
            assertEquals(2, displayed.out().lines().filter(l -> l.startsWith("ping data: rdma-ping-")).count());
            assertTrue(displayed.out().contains("2/2 pings of 64 octets completed"), displayed.out());
        }
    }

    @Test
    void sendrecvOnItsDefaultsAgainstADefaultServeIsAnswered() throws Exception {
        // rdma_client's 16 zero octets advertise nothing: serve echoes them (it closed the connection before)
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()))) {
            String at = "127.0.0.1:" + server.localAddress().getPort();
            ToolRun r = run("sendrecv", at, "--count", "2");
            assertEquals(0, r.code(), r.toString());
            assertEquals(List.of("connected to " + at + ": MPA Rev 2, CRC off, IRD 1 ORD 1, MULPDU 32762",
                    "message 0: sent 16 octets, received 16 octets: 00000000000000000000000000000000",
                    "message 1: sent 16 octets, received 16 octets: 00000000000000000000000000000000"),
                    r.out().lines().limit(3).toList());
            assertTrue(r.out().lines().toList().get(3).startsWith("2/2 messages of 16 octets answered by " + at),
                    r.out());
            // serve counts an echo at its Send's completion, which may come after the client has the echo
            assertTrue(server.lastSession().awaitCounts(0, 0, 2, 10_000), () -> String.valueOf(server.lastSession()));
            assertEquals(2, server.lastSession().echoes());
        }
        try (RpingServer echo = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0)
                .withEchoOnly(true), ServeOptions.on(IwarpStack.builder().threads(1).build()))) {
            ToolRun r = run("sendrecv", "127.0.0.1:" + echo.localAddress().getPort());
            assertEquals(0, r.code(), r.toString());
            assertTrue(r.out().contains("1/1 messages of 16 octets answered"), r.out());
        }
    }

    @Test
    void demoSaysWhereItWroteThePcap(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("demo.pcap");
        ToolRun r = run("demo", "--pcap", file.toString());
        assertEquals(0, r.code(), r.toString());
        long size = Files.size(file);
        assertTrue(size > 24, "more than the pcap global header");
        assertTrue(r.out().contains("demo: wrote the server's traffic to " + file.toAbsolutePath() + " (" + size
                + " octets)"), r.out());
    }

    private static final Pattern OPTION = Pattern.compile("(?<![\\w-])(--?[a-zA-Z][a-zA-Z0-9_-]*)");
    /** An option named after its command ("serve --echo", "ping -C 10 -v"). */
    private static final Pattern OTHER_COMMAND = Pattern.compile("\\b(serve|ping|bench|demo|probe|sendrecv)( \\S+){0,3} $");

    /** Help never names a file users lack nor an option the command lacks (another command's, when named, is fine). */
    @ParameterizedTest(name = "{0} --help")
    @ValueSource(strings = {"serve", "ping", "demo", "bench", "probe", "sendrecv",
            "ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat", "ib_read_lat", "ib_send_lat"})
    void helpNamesOnlyWhatTheUserHas(String command) {
        ToolRun r = run(command, "--help");
        assertEquals(0, r.code(), r.toString());
        assertFalse(r.out().matches("(?s).*\\.md\\b.*"), "help cites a file: " + r.out());
        Set<String> own = new HashSet<>();
        new picocli.CommandLine(new Main()).getSubcommands().get(command).getCommandSpec().options()
                .forEach(o -> own.addAll(java.util.List.of(o.names())));
        String text = r.out().replaceAll("\\s+", " ");
        Matcher m = OPTION.matcher(text);
        while (m.find()) {
            // a negatable option's --no- form, unless the option's own name starts with --no- (bench --no-server-cost)
            String name = own.contains(m.group(1)) ? m.group(1) : m.group(1).replaceFirst("^--no-", "--");
            String before = text.substring(Math.max(0, m.start() - 30), m.start());
            boolean clustered = !name.startsWith("--") && name.length() > 2
                    && name.substring(1).chars().allMatch(c -> own.contains("-" + (char) c));
            if (!own.contains(name) && !clustered && !OTHER_COMMAND.matcher(before).find()) {
                throw new AssertionError(command + " --help mentions " + m.group(1) + ", not one of its options: "
                        + text.substring(Math.max(0, m.start() - 60), Math.min(text.length(), m.end() + 20)));
            }
        }
    }
}
