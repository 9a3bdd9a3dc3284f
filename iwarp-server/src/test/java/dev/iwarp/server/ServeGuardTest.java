package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Limits a peer could defeat: more source addresses in one prefix, silent sockets, a partial FPDU behind a complete
 * one in the same read, and zero-length Writes posing as activity. Every source address is on loopback.
 */
class ServeGuardTest {
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private RpingServer server(ServerLimits limits, long idleSec) throws Exception {
        ServerConfig config = ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(0)
                .withLimits(1024, 60_000, idleSec).withLimits(limits);
        RpingServer s = RpingServer.start(config, ServeOptions.on(IwarpStack.builder().threads(1).build()));
        closeables.add(s);
        return s;
    }

    private Socket from(RpingServer s, String source) throws IOException {
        Socket socket = new Socket(InetAddress.getByName("127.0.0.1"), s.port(), InetAddress.getByName(source), 0);
        closeables.add(socket);
        return socket;
    }

    /** Whether the server closed {@code s} within {@code ms} (EOF or reset); false if it is still open. */
    static boolean closedWithin(Socket s, int ms) throws IOException {
        s.setSoTimeout(ms);
        InputStream in = s.getInputStream();
        try {
            while (in.read() >= 0) {
                // octets the server sent before closing
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        for (int i = 0; i < 1000 && !condition.getAsBoolean(); i++) {
            Thread.sleep(10);
        }
        assertTrue(condition.getAsBoolean(), "condition not reached in 10 s");
    }

    /** A valid MPA Rev 1 Request (no markers, no CRC, no Private Data) and the 20-octet Reply read back. */
    static Socket startMpa(Socket s) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write("MPA ID Req Frame".getBytes(StandardCharsets.US_ASCII));
        out.write(new byte[] {0, 1, 0, 0});
        out.flush();
        s.setSoTimeout(10_000);
        byte[] reply = s.getInputStream().readNBytes(20);
        assertEquals("MPA ID Rep Frame", new String(reply, 0, 16, StandardCharsets.US_ASCII));
        return s;
    }

    /** One FPDU (CRC off) of a zero-length RDMA Write to STag 1, TO 0: a complete message that moves no data. */
    static final byte[] ZERO_LENGTH_WRITE = {0, 14, (byte) 0xC1, 0x40, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0};

    /** A ping from 127.0.0.1 (the tests' attackers use other addresses). */
    private void pingWorks(RpingServer s) throws Exception {
        IwarpStack stack = IwarpStack.builder().threads(1).build();
        closeables.add(stack);
        try (RpingClient c = RpingClient.connect(stack, s.localAddress(), RpingClient.rpingSettings(false), 64,
                10_000)) {
            assertArrayEquals(RpingClient.pingData(0, 'A', 64), c.ping(0));
        }
    }

    @Test
    void perSourceLimitCountsTheWholeSlash24() throws Exception {
        RpingServer s = server(new ServerLimits(0, 2, 0, 0), 0);
        from(s, "127.0.0.1");
        from(s, "127.0.0.2");
        await(() -> s.inStartup() == 2);
        assertTrue(closedWithin(from(s, "127.0.0.3"), 5_000), "a third connection from 127.0.0.0/24 is closed");
        assertEquals(1, s.refused());
        assertFalse(closedWithin(from(s, "127.0.1.1"), 200), "another /24 still gets in");
    }

    @Test
    void aSocketThatSendsNothingIsClosedByTheFirstOctetTimeout() throws Exception {
        RpingServer s = server(ServerLimits.defaults(), 0); // the startup timeout is 60 s here
        Socket silent = from(s, "127.0.0.1");
        long start = System.nanoTime();
        assertTrue(closedWithin(silent, 6_000), "a silent socket is closed long before the startup timeout");
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(ms >= 1_500, "not before the default 2 s: " + ms + " ms");
        await(() -> s.inStartup() == 0);
    }

    @Test
    void startupsPerPrefixAreCappedWellBelowTheGlobalCap() throws Exception {
        RpingServer s = server(ServerLimits.defaults(), 0);
        List<Socket> silent = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            silent.add(from(s, "127.0.1." + (1 + i % 4)));
        }
        int closed = 0;
        for (Socket q : silent) {
            closed += closedWithin(q, 100) ? 1 : 0;
        }
        assertTrue(closed >= 8, "40 silent sockets from one /24: those beyond the per-prefix startup cap are "
                + "closed at once, got " + closed);
        pingWorks(s); // from another /24
    }

    @Test
    void aPartialFpduBehindACompleteOneInTheSameReadHitsTheMessageDeadline() throws Exception {
        RpingServer s = server(new ServerLimits(0, 0, 500, 0), 0); // no idle timeout: only the deadline can close
        Socket c = startMpa(from(s, "127.0.0.1"));
        byte[] both = new byte[ZERO_LENGTH_WRITE.length + 2];
        System.arraycopy(ZERO_LENGTH_WRITE, 0, both, 0, ZERO_LENGTH_WRITE.length);
        both[ZERO_LENGTH_WRITE.length + 1] = (byte) 200; // the next FPDU announces 200 octets, then nothing
        c.getOutputStream().write(both);
        c.getOutputStream().flush();
        assertTrue(closedWithin(c, 5_000), "the partial FPDU is held past the 500 ms message deadline");
    }

    @Test
    void aRequestForMarkersIsRefusedAsSiwRefusesIt() throws Exception {
        RpingServer s = server(ServerLimits.defaults(), 0);
        Socket c = from(s, "127.0.0.1");
        OutputStream out = c.getOutputStream();
        out.write("MPA ID Req Frame".getBytes(StandardCharsets.US_ASCII));
        out.write(new byte[] {(byte) 0x80, 1, 0, 0}); // M=1, Rev 1
        out.flush();
        c.setSoTimeout(10_000);
        byte[] reply = c.getInputStream().readNBytes(20);
        assertEquals("MPA ID Rep Frame", new String(reply, 0, 16, StandardCharsets.US_ASCII));
        assertEquals(0x20, reply[16] & 0xFF, "R=1, M=0");
        assertTrue(closedWithin(c, 5_000), "then closed");
        assertEquals(0, s.sessions().size());
    }

    @Test
    void zeroLengthWritesAreNotActivity() throws Exception {
        RpingServer s = server(new ServerLimits(0, 0, 0, 0), 1); // idle timeout 1 s
        Socket c = startMpa(from(s, "127.0.0.1"));
        OutputStream out = c.getOutputStream();
        boolean closed = false;
        long start = System.nanoTime();
        try {
            for (int i = 0; i < 20 && !closed; i++) { // one every 200 ms for 4 s
                out.write(ZERO_LENGTH_WRITE);
                out.flush();
                closed = closedWithin(c, 200);
            }
        } catch (IOException e) {
            closed = true;
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(closed, "zero-length Writes kept the connection open past the 1 s idle timeout");
        assertTrue(ms < 3_000, "closed after " + ms + " ms");
    }
}
