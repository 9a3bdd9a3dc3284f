package dev.iwarp.server;

import dev.iwarp.bootstrap.IftFraming;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.ift.IftSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.iwarp.server.ToolRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The command line with {@code --wire ift}: ping, bench, sendrecv, probe and demo against an
 * in-process serve over IFT (the framing serve {@code --wire ift} builds from its options), the IFT
 * options as negotiated, and bad options (exit 2, one line).
 */
class IftCommandsTest {
    /** serve --wire ift with these IFT options, as ServeCommand builds it. */
    private static RpingServer server(String... iftOptions) throws Exception {
        return server(ServerConfig.defaults().withAddress("127.0.0.1", 0), iftOptions);
    }

    private static RpingServer server(ServerConfig config, String... iftOptions) throws Exception {
        WireOptions wire = new WireOptions();
        picocli.CommandLine cl = new picocli.CommandLine(wire);
        cl.parseArgs(iftOptions);
        return RpingServer.start(config, ServeOptions.on(IwarpStack.builder().threads(1).build())
                .framing(wire.ift.framing(config.startupTimeoutMs(), config.ird(), config.ord())));
    }

    @Test
    void pingAndBenchOverIft() throws Exception {
        try (RpingServer s = server()) {
            String at = "127.0.0.1:" + s.port();
            ToolRun ping = run("ping", at, "--wire", "ift", "-C", "3", "-S", "100", "-v", "-V");
            assertEquals(0, ping.code(), ping.err() + ping.out());
            assertTrue(Pattern.compile("connected to .*: IFT node A, CRC out header\\+payload, in header\\+payload "
                    + "checked, VTag 0x[0-9A-F]{4} peer 0x[0-9A-F]{4}, IRD 1 ORD 1, MULPDU 65535\n")
                    .matcher(ping.out()).find(), ping.out());
            assertTrue(ping.out().contains("ping data: rdma-ping-2: CDEFG"), ping.out());
            assertTrue(ping.out().contains("3/3 pings of 100 octets verified"), ping.out());
            RpingSession session = s.lastSession();
            assertTrue(session.awaitCounts(3, 3, 6, 10_000), session::toString);
            assertEquals(6, session.sends(), "the setup Send is not one of the session's: " + session);

            ToolRun read = run("bench", at, "--wire", "ift", "--op", "read", "--size", "9000", "--iterations", "40",
                    "--depth", "4", "--connections", "2");
            assertEquals(0, read.code(), read.err() + read.out());
            assertTrue(read.out().contains("bench read: 9000 octets x 80, depth 4, 2 connection(s), "
                    + "IFT CRC header+payload"), read.out());
            assertTrue(read.out().contains("bytes 720000, iterations 80,"), read.out());

            ToolRun write = run("bench", at, "--wire", "ift", "--op", "write", "--size", "70000", "--iterations", "20",
                    "--ift-send-crc", "payload");
            assertEquals(0, write.code(), write.err() + write.out());
            assertTrue(write.out().contains("bench write: 70000 octets x 20, depth 16, 1 connection(s), IFT CRC payload"),
                    write.out());

            ToolRun send = run("bench", at, "--wire", "ift", "--op", "send", "--size", "1000", "--iterations", "30",
                    "--ift-send-crc", "none");
            assertEquals(0, send.code(), send.err() + send.out());
            assertTrue(send.out().contains("bench send: 1000 octets x 30, depth 16, 1 connection(s), IFT CRC none"),
                    send.out());
            // the ping, 2 + 1 + 1 bench connections, and each bench's two short connections asking serve for its
            // cost (before and after the measured phase)
            assertEquals(11, s.accepted());
        }
    }

    @Test
    void iftOptionsAreWhatIsNegotiated() throws Exception {
        try (RpingServer s = server()) {
            String at = "127.0.0.1:" + s.port();
            // we ignore both CRCs (IH=IP=1): node B then omits them (digest Q18); we send only the payload CRC
            ToolRun ping = run("ping", at, "--wire", "ift", "-C", "1", "--ift-send-crc", "payload", "--ift-check-crc",
                    "none", "--ift-vtag", "0x1A2B");
            assertEquals(0, ping.code(), ping.err() + ping.out());
            assertTrue(ping.out().contains(": IFT node A, CRC out payload, in none, VTag 0x1A2B peer 0x"), ping.out());
        }
        try (RpingServer s = server("--ift-send-crc", "none", "--ift-check-crc", "header")) {
            String at = "127.0.0.1:" + s.port();
            ToolRun ping = run("ping", at, "--wire", "ift", "-C", "1");
            assertEquals(0, ping.code(), ping.err() + ping.out());
            assertTrue(ping.out().contains(": IFT node A, CRC out header+payload, the peer ignores payload, in none,"),
                    ping.out());
            // the server sends no CRC, we require the header CRC: A7, refused before any frame
            ToolRun refused = run("ping", at, "--wire", "ift", "-C", "1", "--ift-require-crc", "header", "--timeout", "5000");
            assertEquals(1, refused.code(), refused.err() + refused.out());
            assertTrue(refused.out().contains("ping failed: cannot connect to") && refused.out().contains("A7"),
                    refused.out());
            ToolRun unchecked = run("ping", at, "--wire", "ift", "-C", "1", "--ift-require-checked", "--timeout", "5000");
            assertEquals(1, unchecked.code(), unchecked.err() + unchecked.out());
            assertTrue(unchecked.out().contains("A8"), unchecked.out());
        }
    }

    @Test
    void sendRecvAndProbeOverIft() throws Exception {
        try (RpingServer s = server()) {
            String at = "127.0.0.1:" + s.port();
            ToolRun sr = run("sendrecv", at, "--wire", "ift", "--size", "100", "--count", "3");
            assertEquals(0, sr.code(), sr.err() + sr.out());
            assertTrue(sr.out().contains("3/3 messages of 100 octets answered"), sr.out());
            // DDP and RDMAP violations: the same answers as over MPA (RFC 5041 §7.2, RFC 5040 §7.2)
            String[][] cases = {{"write-invalid-stag", "1/1/0x00"}, {"read-invalid-stag", "0/1/0x00"},
                    {"send-too-long", "1/2/0x05"}};
            for (String[] c : cases) {
                ToolRun probe = run("probe", at, "--wire", "ift", "--case", c[0], "--timeout", "5000");
                assertEquals(0, probe.code(), probe.err() + probe.out());
                assertTrue(probe.out().contains("connected: IFT node A, CRC out header+payload"), probe.out());
                assertTrue(probe.out().contains("result: AS-RFC: Terminate " + c[1]), probe.out());
            }
        }
    }

    @Test
    void demoOverIftWithCapture(@TempDir Path dir) throws Exception {
        Path pcap = dir.resolve("ift.pcap");
        ToolRun demo = run("demo", "--wire", "ift", "--pcap", pcap.toString());
        assertEquals(0, demo.code(), demo.err() + demo.out());
        assertTrue(demo.out().contains("(IFT, "), demo.out());
        assertTrue(demo.out().contains("10/10 pings of 64 octets verified"), demo.out());
        assertTrue(demo.out().contains("server: 10 RDMA Reads (640 octets), 10 RDMA Writes (640 octets), 20 Sends"),
                demo.out());
        assertTrue(demo.out().contains("demo: OK"), demo.out());
        // the capture holds the raw IFT stream: both adaption indications start with the magic "RDDP"
        String octets = new String(Files.readAllBytes(pcap), StandardCharsets.ISO_8859_1);
        Matcher m = Pattern.compile("RDDP\u0000\u0001\u0000\u0001").matcher(octets);
        int indications = 0;
        while (m.find()) {
            indications++;
        }
        assertEquals(2, indications, "phase 0 and phase 1, version 1, BC version 1");
    }

    @Test
    void withoutTargetRegionTheSetupSendIsEmpty() throws Exception {
        try (RpingServer s = server(ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(0))) {
            String at = "127.0.0.1:" + s.port();
            ToolRun ping = run("ping", at, "--wire", "ift", "-C", "2", "-v");
            assertEquals(0, ping.code(), ping.err() + ping.out());
            ToolRun bench = run("bench", at, "--wire", "ift", "--op", "write", "--size", "100", "--iterations", "1");
            assertEquals(1, bench.code(), bench.err() + bench.out());
            assertEquals("bench: the server advertised no target region in its setup Send (IFT) (got 0 octets; "
                    + "serve --target-size)", bench.err().strip());
        }
    }

    @SuppressWarnings("try") // the stack is held open by the try, used through the wire
    @Test
    void anIftPeerWithoutSetupSendIsNotAServe() throws Exception {
        try (IwarpStack peerStack = IwarpStack.builder().threads(1).build();
             IwarpStack clientStack = IwarpStack.builder().threads(1).build()) {
            dev.iwarp.verbs.ProtectionDomain pd = peerStack.allocPd();
            io.netty.channel.Channel listener = peerStack.listen(new InetSocketAddress("127.0.0.1", 0),
                    IftFraming.of(IftSettings.defaults()), r -> r.accept(pd, new dev.iwarp.verbs.CompletionQueue(),
                            new dev.iwarp.verbs.CompletionQueue(), new byte[0]));
            try {
                ToolRun ping = run("ping", "127.0.0.1:" + ((InetSocketAddress) listener.localAddress()).getPort(),
                        "--wire", "ift", "-C", "1", "--timeout", "1000");
                assertEquals(1, ping.code(), ping.err() + ping.out());
                assertTrue(ping.out().contains("ping failed: cannot connect to 127.0.0.1:")
                        && ping.out().contains(": no IFT setup message (serve's first Send): not within the timeout"),
                        ping.out());
            } finally {
                listener.close().sync();
            }
        }
    }

    @Test
    void badIftOptionsExitTwoWithOneLine() {
        ToolRun crc = run("serve", "--wire", "ift", "--ift-send-crc", "sometimes");
        assertEquals(2, crc.code());
        assertEquals("serve: --ift-send-crc must be header,payload, header, payload or none: sometimes",
                crc.err().strip());
        ToolRun none = run("serve", "--wire", "ift", "--ift-check-crc", "none,header");
        assertEquals(2, none.code());
        assertEquals("serve: --ift-check-crc: none cannot be combined: none,header", none.err().strip());
        ToolRun vtag = run("ping", "127.0.0.1:9", "--wire", "ift", "--ift-vtag", "65536");
        assertEquals(2, vtag.code());
        assertEquals("ping: --ift-vtag must be random or 0..65535: 65536", vtag.err().strip());
        ToolRun otherWire = run("serve", "--ift-vtag", "1");
        assertEquals(2, otherWire.code());
        assertEquals("serve: --ift-* options are for --wire ift", otherWire.err().strip());
        ToolRun vitcp = run("bench", "127.0.0.1:9", "--wire", "vitcp", "--ift-require-checked");
        assertEquals(2, vitcp.code());
        assertEquals("bench: --ift-* options are for --wire ift", vitcp.err().strip());
        ToolRun serveMpa = run("serve", "--wire", "ift", "--mpa-rev", "1");
        assertEquals(2, serveMpa.code());
        assertTrue(serveMpa.err().startsWith("serve: --crc, --markers, --mpa-rev and --no-p2p are MPA options, not for "
                + "--wire ift"), serveMpa.err());
        for (String[] mpaOnly : new String[][] {{"--markers"}, {"--mpa-rev", "1"}, {"--p2p"}, {"--crc"}}) {
            String[] args = new String[4 + mpaOnly.length];
            System.arraycopy(new String[] {"ping", "127.0.0.1:9", "--wire", "ift"}, 0, args, 0, 4);
            System.arraycopy(mpaOnly, 0, args, 4, mpaOnly.length);
            ToolRun ping = run(args);
            assertEquals(2, ping.code(), String.join(" ", args));
            assertEquals("ping: --crc, --markers, --mpa-rev and --p2p are MPA options, not for --wire ift (its CRCs: "
                    + "--ift-send-crc, --ift-check-crc)", ping.err().strip());
        }
        ToolRun benchCrc = run("bench", "127.0.0.1:9", "--wire", "ift", "--crc");
        assertEquals(2, benchCrc.code());
        assertTrue(benchCrc.err().startsWith("bench: --crc is for MPA and VI/TCP"), benchCrc.err());
        ToolRun markers = run("probe", "127.0.0.1:9", "--wire", "ift", "--case", "markers");
        assertEquals(2, markers.code());
        assertEquals("probe: --case markers is an MPA case; IFT never uses markers", markers.err().strip());
        ToolRun probeVitcp = run("probe", "127.0.0.1:9", "--wire", "vitcp", "--case", "write-invalid-stag");
        assertEquals(2, probeVitcp.code());
        assertEquals("probe: probe runs over --wire iwarp or --wire ift, not vitcp", probeVitcp.err().strip());
    }

    @Test
    void iftDefaultPortIs7176() throws Exception {
        assertEquals(new InetSocketAddress(InetAddress.getByName("10.0.0.1"), 7176),
                PingCommand.parse("10.0.0.1", ServerConfig.DEFAULT_IFT_PORT));
        WireOptions options = new WireOptions();
        options.wire = WireOptions.Wire.ift;
        assertEquals(7176, options.defaultPort());
        IftFraming f = options.ift.framing(10_000, 16, 16);
        assertEquals(IftSettings.defaults().toString(), f.settings().toString(), "no option: the codec's defaults");
    }
}
