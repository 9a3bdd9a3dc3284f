package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.VitcpWire;
import dev.iwarp.vitcp.VitcpConfig;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A session's closing line counts what the peer did to us too: bench's RDMA Writes land in our target region and
 * its RDMA Reads are answered from it, though the server posts nothing for either.
 */
class PeerActivityLineTest {
    private static final Pattern PEER = Pattern.compile("; the peer: (\\d+) Writes \\((\\d+) octets placed\\), "
            + "(\\d+) Reads answered \\((\\d+) octets\\), (\\d+) Sends \\((\\d+) octets\\)$");

    private static int run(String... args) {
        StringWriter out = new StringWriter();
        return Main.run(args, new PrintWriter(out, true), new PrintWriter(new StringWriter(), true));
    }

    private static Matcher closedLine(RpingServer server) throws InterruptedException {
        RpingSession s = server.lastSession();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (s.connection().channel().isActive() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        String line = s.toString();
        Matcher m = PEER.matcher(line);
        assertTrue(m.find(), line);
        assertTrue(line.startsWith("rping session 127.0.0.1:"), line);
        return m;
    }

    @Test
    void benchWritesAndReadsAreCountedAsThePeers() throws Exception {
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()))) {
            String at = "127.0.0.1:" + server.port();
            assertEquals(0, run("bench", at, "--op", "write", "--size", "1024", "--iterations", "200", "--warmup", "0",
                    "--no-server-cost")); // the last session is then bench's own
            Matcher w = closedLine(server);
            long writes = Long.parseLong(w.group(1));
            assertTrue(writes >= 200, w.group());
            assertEquals(writes * 1024, Long.parseLong(w.group(2)), w.group());
            assertEquals("0", w.group(3), w.group());

            assertEquals(0, run("bench", at, "--op", "read", "--size", "2048", "--iterations", "100", "--warmup", "0",
                    "--no-server-cost"));
            Matcher r = closedLine(server);
            assertEquals("0", r.group(1), r.group());
            long reads = Long.parseLong(r.group(3));
            assertTrue(reads >= 100, r.group());
            assertEquals(reads * 2048, Long.parseLong(r.group(4)), r.group());
        }
    }

    private static RpingServer vitcpServer() throws Exception {
        return RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(VitcpWire.server(VitcpConfig.builder().rdmaReadWindow(16).build(),
                        VitcpWire.DEFAULT_DISCRIMINATOR.getBytes(StandardCharsets.US_ASCII), false, 1)));
    }

    @Test
    void vitcpBenchWritesAndReadsAreCountedAsThePeers() throws Exception {
        try (RpingServer server = vitcpServer()) {
            String at = "127.0.0.1:" + server.port();
            assertEquals(0, run("bench", at, "--wire", "vitcp", "--op", "write", "--size", "1024", "--iterations", "200",
                    "--warmup", "0", "--no-server-cost"));
            Matcher w = closedLine(server);
            long writes = Long.parseLong(w.group(1));
            assertTrue(writes >= 200, w.group());
            assertEquals(writes * 1024, Long.parseLong(w.group(2)), w.group());
            assertEquals("0", w.group(3), w.group());
            assertEquals("0", w.group(5), w.group());

            assertEquals(0, run("bench", at, "--wire", "vitcp", "--op", "read", "--size", "2048", "--iterations", "100",
                    "--warmup", "0", "--no-server-cost"));
            Matcher r = closedLine(server);
            assertEquals("0", r.group(1), r.group());
            long reads = Long.parseLong(r.group(3));
            assertTrue(reads >= 100, r.group());
            assertEquals(reads * 2048, Long.parseLong(r.group(4)), r.group());
        }
    }

    @Test
    void vitcpPingsSendsAreCountedAsReceived() throws Exception {
        try (RpingServer server = vitcpServer()) {
            assertEquals(0, run("ping", "127.0.0.1:" + server.port(), "--wire", "vitcp", "-C", "3"));
            Matcher m = closedLine(server);
            assertEquals("; the peer: 0 Writes (0 octets placed), 0 Reads answered (0 octets), 6 Sends (96 octets)",
                    m.group());
        }
    }

    @Test
    void aRefusedWriteIsNotCountedAsPlaced() throws Exception {
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()))) {
            // the Write to an unadvertised STag ends the stream with a Terminate: none of the peer's Writes placed
            assertEquals(0, run("probe", "127.0.0.1:" + server.port(), "--case", "write-invalid-stag"));
            Matcher m = closedLine(server);
            assertEquals("; the peer: 0 Writes (0 octets placed), 0 Reads answered (0 octets), 0 Sends (0 octets)",
                    m.group());
        }
    }

    @Test
    void pingsSendsAreCountedAsReceived() throws Exception {
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()))) {
            assertEquals(0, run("ping", "127.0.0.1:" + server.port(), "-C", "3"));
            Matcher m = closedLine(server);
            // rping: the client sends two 16-octet advertisements per ping and never Writes or Reads us
            assertEquals("; the peer: 0 Writes (0 octets placed), 0 Reads answered (0 octets), 6 Sends (96 octets)",
                    m.group());
        }
    }
}
