package dev.iwarp.server;

import dev.iwarp.server.wire.VitcpWire;
import dev.iwarp.vitcp.VitcpConfig;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

import static dev.iwarp.server.ToolRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The command line with {@code --wire vitcp}: ping, bench and demo against an in-process VI/TCP serve. */
class VitcpCommandsTest {
    private static RpingServer server() throws Exception {
        return RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(VitcpWire.server(VitcpConfig.builder().crcOption(true).rdmaReadWindow(16).build(),
                        VitcpWire.DEFAULT_DISCRIMINATOR.getBytes(StandardCharsets.US_ASCII), false, 1)));
    }

    @Test
    void pingAndBenchOverVitcp() throws Exception {
        try (RpingServer s = server()) {
            String at = "127.0.0.1:" + s.port();
            ToolRun ping = run("ping", at, "--wire", "vitcp", "-C", "3", "-S", "100", "-v", "-V", "--crc");
            assertEquals(0, ping.code(), ping.err() + ping.out());
            assertTrue(ping.out().contains("VI/TCP Reliable Delivery, CRC on (ETHERNET_REFLECTED), MTU 8192, "
                    + "RDMA Read Window 1"), ping.out());
            assertTrue(ping.out().contains("ping data: rdma-ping-2: CDEFG"), ping.out());
            assertTrue(ping.out().contains("3/3 pings of 100 octets verified"), ping.out());

            ToolRun bench = run("bench", at, "--wire", "vitcp", "--op", "read", "--size", "9000", "--iterations", "40",
                    "--depth", "4", "--connections", "2");
            assertEquals(0, bench.code(), bench.err() + bench.out());
            assertTrue(bench.out().contains("bench read: 9000 octets x 80, depth 4, 2 connection(s), "
                    + "VI/TCP Reliable Delivery CRC off"), bench.out());
            assertTrue(bench.out().contains("bytes 720000, iterations 80,"), bench.out());
            assertTrue(bench.out().contains(" t_min[usec]   t_typical[usec]"), bench.out());
            // the ping, bench's 2 connections, and bench's own short connections asking serve for its cost (before
            // and after the measured phase)
            assertEquals(5, s.accepted());

            ToolRun mismatch = run("ping", at, "--wire", "vitcp", "--reliability", "reliable-reception", "-C", "1");
            assertEquals(1, mismatch.code());
            assertTrue(mismatch.out().contains("ping failed: cannot connect to") && mismatch.out().contains("REJECTED"),
                    mismatch.out());
        }
    }

    @Test
    void sendRecvOverVitcp() throws Exception {
        try (RpingServer s = server()) {
            String addr = "127.0.0.1:" + s.localAddress().getPort();
            ToolRun run = run("sendrecv", addr, "--wire", "vitcp", "--size", "100", "--count", "3", "--crc");
            assertEquals(0, run.code(), run.err() + run.out());
            assertTrue(run.out().contains("VI/TCP Reliable Delivery, CRC on (ETHERNET_REFLECTED)"), run.out());
            assertTrue(run.out().contains("message 2: sent 100 octets, received 100 octets"), run.out());
            assertTrue(run.out().contains("3/3 messages of 100 octets answered"), run.out());
            RpingSession session = s.lastSession();
            assertTrue(session.awaitCounts(0, 0, 3, 10_000), session::toString);
            assertEquals(3, session.echoes(), session::toString);
        }
    }

    @Test
    void demoOverVitcp() {
        ToolRun demo = run("demo", "--wire", "vitcp");
        assertEquals(0, demo.code(), demo.err() + demo.out());
        assertTrue(demo.out().contains("(VI/TCP, nio), ping -C 10 -S 64 -v -V"), demo.out());
        assertTrue(demo.out().contains("10/10 pings of 64 octets verified"), demo.out());
        assertTrue(demo.out().contains("server: 10 RDMA Reads (640 octets), 10 RDMA Writes (640 octets), 20 Sends"),
                demo.out());
        assertTrue(demo.out().contains("demo: OK"), demo.out());
    }

    @Test
    void badVitcpOptionsExitTwoWithOneLine() {
        ToolRun level = run("serve", "--wire", "vitcp", "--reliability", "sometimes");
        assertEquals(2, level.code());
        assertEquals("serve: --reliability: unknown value sometimes", level.err().strip());
        ToolRun pcap = run("serve", "--wire", "vitcp", "--pcap", "x.pcap");
        assertEquals(2, pcap.code());
        assertTrue(pcap.err().contains("iWARP options, not for --wire vitcp"), pcap.err());
        ToolRun mtu = run("serve", "--wire", "vitcp", "--mtu", "0");
        assertEquals(2, mtu.code());
        assertTrue(mtu.err().contains("--mtu must be in 1..65495, not 0"), mtu.err());
        for (String[] mpaOnly : new String[][] {{"--markers"}, {"--mpa-rev", "1"}, {"--p2p"}}) {
            String[] args = new String[4 + mpaOnly.length];
            System.arraycopy(new String[] {"ping", "127.0.0.1:9", "--wire", "vitcp"}, 0, args, 0, 4);
            System.arraycopy(mpaOnly, 0, args, 4, mpaOnly.length);
            ToolRun ping = run(args);
            assertEquals(2, ping.code(), String.join(" ", args));
            assertEquals("ping: --markers, --mpa-rev and --p2p are MPA options, not for --wire vitcp", ping.err().strip());
        }
        ToolRun demoPcap = run("demo", "--wire", "vitcp", "--pcap", "x.pcap");
        assertEquals(2, demoPcap.code());
        assertEquals("demo: --pcap captures the iWARP wire only", demoPcap.err().strip());
        ToolRun wire = run("serve", "--wire", "ib");
        assertEquals(2, wire.code());
        assertTrue(wire.err().contains("--wire"), wire.err());
    }

    @Test
    void vitcpDefaultPortIs7175() throws Exception {
        assertEquals(new InetSocketAddress(InetAddress.getByName("10.0.0.1"), 7175),
                PingCommand.parse("10.0.0.1", ServerConfig.DEFAULT_VITCP_PORT));
        WireOptions options = new WireOptions();
        assertEquals(7174, options.defaultPort());
        options.wire = WireOptions.Wire.vitcp;
        assertEquals(7175, options.defaultPort());
    }
}
