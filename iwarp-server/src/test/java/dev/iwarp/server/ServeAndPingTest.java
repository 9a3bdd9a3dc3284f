package dev.iwarp.server;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcOpcode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code serve} in-process on 127.0.0.1 with the rping client of {@code ping}, and {@code demo}. */
class ServeAndPingTest {
    private static final int PINGS = 5;

    private RpingServer server;
    private IwarpStack clientStack;

    @BeforeEach
    void start() throws Exception {
        server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()));
        clientStack = IwarpStack.builder().threads(1).build();
    }

    @AfterEach
    void stop() {
        clientStack.close();
        server.close();
    }

    @ParameterizedTest(name = "-S {0}")
    @ValueSource(ints = {26, 64, 1000, 65535})
    void pingsAreReadAndWrittenBackByteForByte(int size) throws Exception {
        try (RpingClient client = RpingClient.connect(clientStack, server.localAddress(), RpingClient.rpingSettings(false),
                size, 10_000)) {
            MpaParameters mpa = ((IwarpWire.Connection) client.connection()).mpaParameters();
            assertEquals(2, mpa.revision());
            assertEquals(1, mpa.ird());
            assertEquals(1, mpa.ord());
            RpingSession session = server.lastSession();
            for (int n = 0; n < PINGS; n++) {
                byte[] expected = RpingClient.pingData(n, 'A' + n, size);
                byte[] got = client.ping(n);
                assertArrayEquals(expected, client.startBuffer(), "start_buf of ping " + n);
                assertArrayEquals(expected, got, "rdma_buf of ping " + n);
                // the server's Write carried it (got); its buffers stay for the next advertisement: none is
                // allocated and zeroed per advertisement
                assertTrue(session.holdsBuffers(), "server session buffers kept after ping " + n);
            }
            assertTrue(session.awaitCounts(PINGS, PINGS, 2 * PINGS, 10_000), session::toString);
            assertEquals(PINGS, session.reads());
            assertEquals(PINGS, session.writes());
            assertEquals(2 * PINGS, session.sends());
            assertEquals(0, session.echoes());
            assertEquals((long) PINGS * size, session.bytesRead());
            assertEquals((long) PINGS * size, session.bytesWritten());
        }
    }

    @Test
    void pingDataIsRpingsPattern() {
        byte[] b = RpingClient.pingData(3, 'y', 26);
        assertEquals("rdma-ping-3: yzABCDEFGHIJ", new String(b, 0, 25, StandardCharsets.US_ASCII));
        assertEquals(0, b[25]);
    }

    @Test
    void sendsOfOtherLengthsAreEchoed() throws Exception {
        ProtectionDomain pd = clientStack.allocPd();
        ByteBuf srcMem = PooledByteBufAllocator.DEFAULT.directBuffer(1000, 1000);
        ByteBuf dstMem = PooledByteBufAllocator.DEFAULT.directBuffer(1000, 1000);
        try {
            byte[] payload = new byte[1000];
            for (int i = 0; i < payload.length; i++) {
                payload[i] = (byte) (i * 7);
            }
            srcMem.setBytes(0, payload);
            dstMem.setZero(0, 1000);
            MemoryRegion src = pd.register(srcMem);
            MemoryRegion dst = pd.register(dstMem, Access.LOCAL_WRITE);
            ConnectOptions opts = ConnectOptions.of(pd).mpa(RpingClient.rpingSettings(true));
            QueuePair qp = clientStack.connect(server.localAddress(), opts).get(10, TimeUnit.SECONDS);
            assertTrue(qp.connectionParameters().framing(MpaParameters.class).crc());
            for (int len : new int[] {1000, 5, 17}) {
                qp.postRecv(RecvRequest.of(len, dst.all()));
                qp.postSend(SendRequest.send(len, src.slice(0, len)));
                assertTrue(opts.sendCq().take(10, TimeUnit.SECONDS).isSuccess());
                Completion r = opts.recvCq().take(10, TimeUnit.SECONDS);
                assertNotNull(r);
                assertEquals(WcOpcode.RECV, r.opcode());
                assertEquals(len, r.byteLength());
                byte[] got = new byte[len];
                dstMem.getBytes(0, got);
                byte[] expected = new byte[len];
                System.arraycopy(payload, 0, expected, 0, len);
                assertArrayEquals(expected, got);
            }
            RpingSession session = server.lastSession();
            assertTrue(session.awaitCounts(0, 0, 3, 10_000));
            assertEquals(3, session.echoes());
            assertEquals(0, session.reads());
            qp.channel().close().sync();
        } finally {
            srcMem.release();
            dstMem.release();
        }
    }

    @Test
    void demoRunsInProcess() {
        StringWriter out = new StringWriter();
        int code = Main.run(new String[] {"demo"}, new PrintWriter(out, true), new PrintWriter(new StringWriter(), true));
        String text = out.toString();
        assertEquals(0, code, text);
        assertEquals(DemoCommand.PINGS, text.lines().filter(l -> l.startsWith("ping data: rdma-ping-")).count(), text);
        assertTrue(text.contains("ping data: rdma-ping-9: JKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyzA\n"), text);
        assertTrue(text.contains("10/10 pings of 64 octets verified"), text);
        assertTrue(text.contains("server: 10 RDMA Reads (640 octets), 10 RDMA Writes (640 octets), 20 Sends"), text);
        assertTrue(text.endsWith("demo: OK\n"), text);
    }

    @Test
    void pingToNothingFailsWithNonZeroExit() throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        StringWriter out = new StringWriter();
        int code = Main.run(new String[] {"ping", "127.0.0.1:" + port, "-C", "1", "--timeout", "5000"},
                new PrintWriter(out, true), new PrintWriter(new StringWriter(), true));
        assertEquals(1, code);
        assertTrue(out.toString().contains("ping failed: cannot connect to"), out.toString());
        assertFalse(out.toString().contains("ping data"));
    }
}
