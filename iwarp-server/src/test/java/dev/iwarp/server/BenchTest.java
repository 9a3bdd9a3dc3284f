package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code bench} against an in-process {@code serve}: the target region from the Reply Private Data, and echoes. */
class BenchTest {
    private RpingServer server;
    private IwarpStack clientStack;

    @BeforeEach
    void start() throws Exception {
        server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(8192).withSharedTarget(true),
                IwarpStack.builder().threads(1).build(), true);
        clientStack = IwarpStack.builder().threads(1).build();
    }

    @AfterEach
    void stop() {
        clientStack.close();
        server.close();
    }

    private static byte[] pattern(int size) {
        byte[] p = new byte[size];
        for (int i = 0; i < size; i++) {
            p[i] = (byte) (i * 31 + 7); // Bench's source pattern
        }
        return p;
    }

    @Test
    void writesLandInTheAdvertisedTargetRegion() throws Exception {
        Bench.Result r = Bench.run(clientStack, server.localAddress(), Bench.Op.write, 4096, 200, 0, 8, false, 10_000);
        assertEquals(200, r.iterations());
        assertEquals(200L * 4096, r.bytes());
        assertEquals(200, r.latency().getTotalCount());
        byte[] target = new byte[4096];
        server.target().memory().getBytes(0, target);
        assertArrayEquals(pattern(4096), target);
        StringWriter out = new StringWriter();
        BenchCommand.print(r, new PrintWriter(out, true));
        assertTrue(out.toString().contains("bytes 819200, iterations 200,"), out.toString());
    }

    @Test
    void readsRunWithTheNegotiatedOrd() throws Exception {
        Bench.Result r = Bench.run(clientStack, server.localAddress(), Bench.Op.read, 8192, 50, 0, 4, true, 10_000);
        assertEquals(50, r.iterations());
        assertTrue(r.crc());
        assertEquals("MPA Rev 2 CRC on", r.summary());
        assertEquals(4, r.readDepth(), "client ORD = depth, granted by serve's IRD 16");
    }

    @Test
    void sendsAreEchoedOneAtATime() throws Exception {
        Bench.Result r = Bench.run(clientStack, server.localAddress(), Bench.Op.send, 100, 30, 0, 8, false, 10_000);
        assertEquals(30, r.iterations());
        assertEquals(1, r.depth());
        RpingSession s = server.lastSession();
        assertTrue(s.awaitCounts(0, 0, 30, 10_000));
        assertEquals(30, s.echoes());
    }

    @Test
    void writeBeyondTheTargetRegionIsRefusedLocally() {
        IOException e = assertThrows(IOException.class,
                () -> Bench.run(clientStack, server.localAddress(), Bench.Op.write, 8193, 1, 0, 1, false, 10_000));
        assertTrue(e.getMessage().contains("exceeds the server's target region"), e.getMessage());
    }

    @Test
    void severalConnectionsAreSummedAndTheirLatenciesMerged() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new String[] {"bench", "127.0.0.1:" + server.localAddress().getPort(), "--op", "write",
                "--size", "2048", "--iterations", "60", "--depth", "4", "--connections", "3"},
                new PrintWriter(out, true), new PrintWriter(err, true));
        assertEquals(0, code, err::toString);
        String text = out.toString();
        assertTrue(text.contains("2048 octets x 180, depth 4, 3 connection(s)"), text);
        assertTrue(text.contains("bytes 368640, iterations 180,"), text);
        assertTrue(text.contains("Gbit/s average, "), text);
        assertTrue(text.contains("Gbit/s peak (250 ms)"), text);
        assertEquals(3L, server.accepted(), "one server session per connection");
    }
}
