package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.testkit.LogCapture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Slot exhaustion under each of {@code serve}'s limits: connections held in startup, connections from one
 * address, a message never finished, and a trickle of one octet per interval that must not count as activity.
 */
class ServeLimitsTest {
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

    private Socket raw(RpingServer s) throws IOException {
        Socket socket = new Socket("127.0.0.1", s.port());
        closeables.add(socket);
        return socket;
    }

    /** Whether the server closed {@code s} within {@code ms} (EOF or reset); false if it is still open. */
    private static boolean closedWithin(Socket s, int ms) throws IOException {
        s.setSoTimeout(ms);
        InputStream in = s.getInputStream();
        try {
            while (in.read() >= 0) {
                // octets the server sent before closing (an MPA Reply)
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

    private void pingWorks(RpingServer s) throws Exception {
        IwarpStack stack = IwarpStack.builder().threads(1).build();
        closeables.add(stack);
        try (RpingClient c = RpingClient.connect(stack, s.localAddress(), RpingClient.rpingSettings(false), 64,
                10_000)) {
            assertArrayEquals(RpingClient.pingData(0, 'A', 64), c.ping(0));
        }
    }

    /** A valid MPA Rev 1 Request without Private Data, and the 20-octet Reply read back: RTS on both sides. */
    private static Socket startMpa(Socket s) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write("MPA ID Req Frame".getBytes(StandardCharsets.US_ASCII));
        out.write(new byte[] {0, 1, 0, 0}); // no markers, no CRC, Rev 1, Private Data length 0
        out.flush();
        s.setSoTimeout(10_000);
        byte[] reply = s.getInputStream().readNBytes(20);
        assertEquals("MPA ID Rep Frame", new String(reply, 0, 16, StandardCharsets.US_ASCII));
        return s;
    }

    @Test
    void connectionsInStartupAreCapped() throws Exception {
        RpingServer s = server(new ServerLimits(3, 0, 0, 0), 0);
        try (LogCapture log = LogCapture.of("dev.iwarp")) {
            List<Socket> silent = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                silent.add(raw(s)); // TCP connected, never a Request: held until the 60 s startup timeout
            }
            await(() -> s.inStartup() == 3);
            for (int i = 0; i < 20; i++) {
                assertTrue(closedWithin(raw(s), 5_000), "connection " + (4 + i) + " closed at once");
            }
            assertEquals(20, s.refused());
            assertEquals(1, log.count(Level.WARN, "connections already in startup (--max-startups)"),
                    "20 refusals in one line (and a count once the 10 s are over)");
            silent.get(0).close();
            await(() -> s.inStartup() == 2);
            pingWorks(s);
            for (Socket q : silent.subList(1, 3)) {
                assertTrue(!closedWithin(q, 50), "the held ones are still open");
            }
        }
    }

    @Test
    void connectionsPerSourceAreCapped() throws Exception {
        RpingServer s = server(new ServerLimits(0, 2, 0, 0), 0);
        Socket a = raw(s);
        raw(s);
        await(() -> s.inStartup() == 2);
        assertTrue(closedWithin(raw(s), 5_000), "a third connection from 127.0.0.1 is closed at once");
        IwarpStack stack = IwarpStack.builder().threads(1).build();
        closeables.add(stack);
        assertThrows(IOException.class, () -> RpingClient.connect(stack, s.localAddress(),
                RpingClient.rpingSettings(false), 64, 5_000), "nor can a ping from the same address get in");
        a.close();
        await(() -> s.inStartup() == 1);
        pingWorks(s);
        assertEquals(2, s.refused());
    }

    @Test
    void anUnfinishedFpduHitsTheMessageDeadlineWhileOctetsTrickleIn() throws Exception {
        RpingServer s = server(new ServerLimits(0, 0, 500, 0), 0);
        Socket c = startMpa(raw(s));
        OutputStream out = c.getOutputStream();
        // an FPDU announcing 200 octets of ULPDU, one octet every 50 ms: it would take 10 s to finish
        out.write(new byte[] {0, (byte) 200});
        long start = System.nanoTime();
        boolean closed = false;
        try {
            for (int i = 0; i < 200 && !closed; i++) {
                out.write(0x41);
                out.flush();
                closed = closedWithin(c, 50);
            }
        } catch (IOException e) {
            closed = true; // reset: the server closed it while we were still sending
        }
        assertTrue(closed, "closed");
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(ms < 8_000, "closed after " + ms + " ms, well before the FPDU could finish");
        pingWorks(s);
    }

    @Test
    void aTrickleOfOctetsIsNotActivity() throws Exception {
        RpingServer s = server(new ServerLimits(0, 0, 0, 0), 1); // idle timeout 1 s, no message deadline
        Socket c = startMpa(raw(s));
        OutputStream out = c.getOutputStream();
        out.write(new byte[] {0, (byte) 200});
        boolean closed = false;
        long start = System.nanoTime();
        try {
            for (int i = 0; i < 200 && !closed; i++) {
                out.write(0x41); // one octet per 50 ms: reads keep coming, messages never
                out.flush();
                closed = closedWithin(c, 50);
            }
        } catch (IOException e) {
            closed = true;
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(closed, "the idle timeout closed a connection that only trickled octets");
        assertTrue(ms < 8_000, "closed after " + ms + " ms");
    }
}
