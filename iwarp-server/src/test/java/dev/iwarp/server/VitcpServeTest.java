package dev.iwarp.server;

import dev.iwarp.server.wire.BlockingCompletions;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.VitcpWire;
import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.VitcpConfig;
import dev.iwarp.vitcp.VitcpConnectException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve --wire vitcp}: the same rping session as over iWARP, on VI/TCP loopback connections
 * (draft-dicecco-vitcp-01), driven by the same client code (ping, bench, the wire-neutral API).
 */
class VitcpServeTest {
    private static final int MTU = 1024;
    private static final byte[] DISCRIMINATOR = "rping".getBytes(StandardCharsets.US_ASCII);
    private static final long TIMEOUT = 10_000;

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    private static VitcpConfig.Builder vi(ViReliabilityLevel level) {
        return VitcpConfig.builder().reliabilityLevel(level).mtu(MTU);
    }

    private RpingServer server(ViReliabilityLevel level, int maxConnections, long idleSec, boolean requireCrc)
            throws Exception {
        // a shared target: these tests check the region's octets after the clients left
        ServerConfig config = ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(1 << 16)
                .withSharedTarget(true).withLimits(maxConnections, 2000, idleSec);
        // both timeouts also bound the good clients' connects: 2 s, not less, on a loaded machine
        RpingServer s = RpingServer.start(config, ServeOptions.on(VitcpWire.server(vi(level).crcOption(true).rdmaReadWindow(16)
                .incomingTimeout(Duration.ofMillis(2000)).build(), DISCRIMINATOR, requireCrc, 1)));
        toClose.add(s);
        return s;
    }

    private RpingServer server() throws Exception {
        return server(ViReliabilityLevel.RELIABLE_DELIVERY, 2, 0, false);
    }

    private ClientWire client(ViReliabilityLevel level) {
        ClientWire c = VitcpWire.client(vi(level).build(), DISCRIMINATOR);
        toClose.add(c);
        return c;
    }

    private ClientWire client() {
        return client(ViReliabilityLevel.RELIABLE_DELIVERY);
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 13 + seed);
        }
        return b;
    }

    private static void awaitNoSessions(RpingServer s) throws InterruptedException {
        for (int i = 0; i < 2000 && !s.sessions().isEmpty(); i++) {
            Thread.sleep(10); // the server's close listener may trail the FIN the client saw
        }
        assertEquals(0, s.sessions().size(), "sessions left open");
    }

    private void normalPingStillWorks(RpingServer s, ClientWire wire) throws Exception {
        try (RpingClient client = RpingClient.connect(wire, s.localAddress(), false, 64, TIMEOUT)) {
            for (int n = 0; n < 3; n++) {
                assertArrayEquals(RpingClient.pingData(n, 'A' + n, 64), client.ping(n));
            }
        }
    }

    @ParameterizedTest(name = "{0}, CRC {1}")
    @CsvSource({"RELIABLE_DELIVERY, false", "RELIABLE_RECEPTION, true", "RELIABLE_DELIVERY, true"})
    void rpingPingsAroundTheMtuAreReadAndWrittenBack(ViReliabilityLevel level, boolean crc) throws Exception {
        RpingServer s = server(level, 8, 0, false);
        ClientWire wire = client(level);
        int[] sizes = {RpingClient.MIN_SIZE, MTU - 1, MTU, MTU + 1, 3 * MTU + 7, RpingClient.MAX_SIZE};
        long octets = 0;
        for (int size : sizes) {
            try (RpingClient client = RpingClient.connect(wire, s.localAddress(), crc, size, TIMEOUT)) {
                assertTrue(client.connection().parameters().contains("MTU " + MTU), client.connection().parameters());
                assertEquals(crc, client.connection().crc());
                RpingSession session = s.lastSession();
                for (int n = 0; n < 3; n++) {
                    byte[] expected = RpingClient.pingData(n, 'A' + n, size);
                    assertArrayEquals(expected, client.ping(n), "client rdma_buf after ping " + n + ", size " + size);
                    assertArrayEquals(expected, session.buffer(size), "server buffer after ping " + n);
                }
                assertTrue(session.awaitCounts(3, 3, 6, TIMEOUT), session::toString);
                assertEquals(3, session.reads());
                assertEquals(3, session.writes());
                assertEquals(6, session.sends());
                assertEquals(0, session.echoes());
                assertEquals(3L * size, session.bytesRead());
                assertEquals(3L * size, session.bytesWritten());
                octets += 3L * size;
            }
        }
        assertEquals(sizes.length, s.accepted());
        assertTrue(octets > 0);
    }

    /** The same application code as over iWARP: register, advertise, post Send/Recv, completions. */
    @Test
    void advertisementsOfZeroOneAndAroundTheMtuOverTheWireNeutralApi() throws Exception {
        RpingServer s = server();
        ClientWire wire = client();
        WireDomain domain = wire.allocDomain();
        int max = MTU + 1;
        ByteBuf srcMem = PooledByteBufAllocator.DEFAULT.directBuffer(max, max);
        ByteBuf dstMem = PooledByteBufAllocator.DEFAULT.directBuffer(max, max);
        ByteBuf adMem = PooledByteBufAllocator.DEFAULT.directBuffer(16, 16);
        ByteBuf goMem = PooledByteBufAllocator.DEFAULT.directBuffer(16, 16);
        WireRegion src = domain.register(srcMem, WireAccess.REMOTE_READ);
        WireRegion dst = domain.register(dstMem, WireAccess.LOCAL_WRITE, WireAccess.REMOTE_WRITE);
        WireRegion ad = domain.register(adMem);
        WireRegion go = domain.register(goMem, WireAccess.LOCAL_WRITE);
        BlockingCompletions cq = new BlockingCompletions();
        WireConnection conn = null;
        try {
            conn = wire.connect(s.localAddress(), domain, false, 1, cq, c -> c.postRecv(1, go, 0, 16), TIMEOUT);
            RpingSession session = s.lastSession();
            int[] sizes = {0, 1, MTU - 1, MTU, MTU + 1};
            for (int i = 0; i < sizes.length; i++) {
                int n = sizes[i];
                byte[] data = pattern(max, i);
                srcMem.setBytes(0, data);
                dstMem.setZero(0, max);
                for (WireRegion target : new WireRegion[] {src, dst}) { // Read from src, then Write into dst
                    Advertisement.of(target, 0, n).encode(adMem, 0);
                    conn.postSend(2, ad, 0, 16);
                    assertEquals(16, cq.take(false, TIMEOUT, "advertisement Send").byteLength());
                    BlockingCompletions.Done goAhead = cq.take(true, TIMEOUT, "go ahead");
                    assertEquals(16, goAhead.byteLength());
                    conn.postRecv(1, go, 0, 16);
                }
                byte[] expected = java.util.Arrays.copyOf(data, n);
                assertArrayEquals(expected, session.buffer(n), "server buffer, size " + n);
                byte[] got = new byte[max];
                dstMem.getBytes(0, got);
                assertArrayEquals(expected, java.util.Arrays.copyOf(got, n), "written back, size " + n);
                for (int k = n; k < max; k++) {
                    assertEquals(0, got[k], "octet " + k + " beyond the advertised " + n + " was written");
                }
            }
            assertTrue(session.awaitCounts(5, 5, 10, TIMEOUT), session::toString);
            long total = 0 + 1 + (MTU - 1) + MTU + (MTU + 1);
            assertEquals(5, session.reads());
            assertEquals(5, session.writes());
            assertEquals(total, session.bytesRead());
            assertEquals(total, session.bytesWritten());
        } finally {
            if (conn != null) {
                conn.channel().close().sync();
            }
            for (WireRegion r : new WireRegion[] {src, dst, ad, go}) {
                r.deregister();
            }
            srcMem.release();
            dstMem.release();
            adMem.release();
            goMem.release();
        }
    }
    @Test
    void sendsOfEveryOtherLengthAreEchoed() throws Exception {
        RpingServer s = server();
        ClientWire wire = client();
        WireDomain domain = wire.allocDomain();
        int max = 3 * MTU;
        ByteBuf srcMem = PooledByteBufAllocator.DEFAULT.directBuffer(max, max);
        ByteBuf dstMem = PooledByteBufAllocator.DEFAULT.directBuffer(max, max);
        WireRegion src = domain.register(srcMem);
        WireRegion dst = domain.register(dstMem, WireAccess.LOCAL_WRITE);
        BlockingCompletions cq = new BlockingCompletions();
        WireConnection conn = null;
        int[] sizes = {0, 1, 15, 17, MTU - 1, MTU, MTU + 1, max};
        try {
            conn = wire.connect(s.localAddress(), domain, false, 1, cq, c -> { }, TIMEOUT);
            for (int n : sizes) {
                byte[] data = pattern(n, n);
                srcMem.setBytes(0, data);
                dstMem.setZero(0, max);
                conn.postRecv(n, dst, 0, max);
                conn.postSend(n, src, 0, n);
                assertEquals(n, cq.take(false, TIMEOUT, "Send").byteLength());
                BlockingCompletions.Done echo = cq.take(true, TIMEOUT, "echo");
                assertEquals(n, echo.wrId());
                assertEquals(n, echo.byteLength());
                byte[] got = new byte[n];
                dstMem.getBytes(0, got);
                assertArrayEquals(data, got, "echo of " + n + " octets");
            }
            RpingSession session = s.lastSession();
            assertTrue(session.awaitCounts(0, 0, sizes.length, TIMEOUT), session::toString);
            assertEquals(sizes.length, session.echoes());
            assertEquals(0, session.reads());
            assertEquals(0, session.writes());
        } finally {
            if (conn != null) {
                conn.channel().close().sync();
            }
            src.deregister();
            dst.deregister();
            srcMem.release();
            dstMem.release();
        }
    }

    @Test
    void theTargetRegionIsAdvertisedInTheConnectAcceptAndBenchUsesIt() throws Exception {
        RpingServer s = server();
        ClientWire wire = client();
        BenchResult w = Bench.run(wire, s.localAddress(), Bench.Op.write, 4096, 200, 0, 8, false, TIMEOUT,
                new java.util.concurrent.atomic.AtomicLong());
        assertEquals(200, w.iterations());
        assertEquals(200L * 4096, w.bytes());
        assertEquals(200, w.latency().getTotalCount());
        assertEquals("VI/TCP Reliable Delivery CRC off", w.summary());
        byte[] expected = new byte[4096];
        for (int i = 0; i < expected.length; i++) {
            expected[i] = (byte) (i * 31 + 7); // Bench's source pattern
        }
        byte[] target = new byte[4096];
        s.target().memory().getBytes(0, target);
        assertArrayEquals(expected, target);

        s.target().memory().setBytes(0, pattern(MTU + 1, 3));
        BenchResult r = Bench.run(wire, s.localAddress(), Bench.Op.read, MTU + 1, 50, 0, 4, true, TIMEOUT,
                new java.util.concurrent.atomic.AtomicLong());
        assertEquals(50, r.iterations());
        assertTrue(r.crc());
        assertEquals(4, r.readDepth(), "RDMA Read Window: the client's 4 against serve's 16");

        BenchResult e = Bench.run(wire, s.localAddress(), Bench.Op.send, MTU + 1, 30, 0, 8, false, TIMEOUT,
                new java.util.concurrent.atomic.AtomicLong());
        assertEquals(30, e.iterations());
        assertEquals(8, e.depth(), "serve granted 8 receives for pipelined Sends");
        assertTrue(s.lastSession().awaitCounts(0, 0, 30, TIMEOUT));
        assertEquals(30, s.lastSession().echoes());

        IOException tooBig = assertThrows(IOException.class, () -> Bench.run(wire, s.localAddress(), Bench.Op.write,
                (1 << 16) + 1, 1, 0, 1, false, TIMEOUT, new java.util.concurrent.atomic.AtomicLong()));
        assertTrue(tooBig.getMessage().contains("exceeds the server's target region (memory handle 0x"),
                tooBig.getMessage());
        assertEquals(4, s.accepted());
    }

    @Test
    void connectAcceptCarriesTheTargetAdvertisement() throws Exception {
        RpingServer s = server();
        try (RpingClient c = RpingClient.connect(client(), s.localAddress(), false, 64, TIMEOUT)) {
            Advertisement ad = Advertisement.decode(c.connection().peerData());
            WireRegion target = s.target();
            assertEquals(target.remoteAddress(0), ad.to());
            assertEquals(target.remoteHandle(), ad.stag());
            assertEquals(1 << 16, ad.size());
        }
    }

    @Test
    void connectionsBeyondTheLimitGetConnectReject() throws Exception {
        RpingServer s = server();
        ClientWire wire = client();
        try (RpingClient a = RpingClient.connect(wire, s.localAddress(), false, 64, TIMEOUT);
             RpingClient b = RpingClient.connect(wire, s.localAddress(), false, 64, TIMEOUT)) {
            IOException e = assertThrows(IOException.class,
                    () -> RpingClient.connect(wire, s.localAddress(), false, 64, TIMEOUT));
            assertEquals(VitcpConnectException.Reason.REJECTED,
                    assertInstanceOf(VitcpConnectException.class, e.getCause()).reason(), e.getMessage());
            assertEquals(1, s.refused());
            assertArrayEquals(RpingClient.pingData(0, 'A', 64), a.ping(0));
            assertArrayEquals(RpingClient.pingData(0, 'A', 64), b.ping(0));
        }
        awaitNoSessions(s);
        normalPingStillWorks(s, wire);
        assertEquals(3, s.accepted());
    }

    /** Reads until the server closes; returns the octets received before that. */
    private static byte[] readUntilClosed(Socket sock) throws IOException {
        sock.setSoTimeout(20_000); // a generous bound, not a timing assertion
        InputStream in = sock.getInputStream();
        return in.readAllBytes();
    }

    @Test
    void garbageIsClosedWithoutAnswerThenAGoodClientIsServed() throws Exception {
        RpingServer s = server();
        try (Socket sock = new Socket("127.0.0.1", s.port())) {
            sock.getOutputStream().write("GET / HTTP/1.1\r\nHost: vitcp\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertEquals(0, readUntilClosed(sock).length, "no CE segment in answer to garbage");
        }
        normalPingStillWorks(s, client());
        assertEquals(1, s.accepted());
    }

    @Test
    void silenceHitsTheIncomingTimeoutThenAGoodClientIsServed() throws Exception {
        RpingServer s = server();
        try (Socket sock = new Socket("127.0.0.1", s.port())) {
            assertEquals(0, readUntilClosed(sock).length); // §4.3 Incoming: "Timeout - close TCP connection"
        }
        normalPingStillWorks(s, client());
        assertEquals(1, s.accepted());
    }

    @Test
    void aReliabilityLevelMismatchIsRejectedAndAWrongDiscriminatorGetsNoMatch() throws Exception {
        RpingServer s = server();
        IOException e = assertThrows(IOException.class, () -> RpingClient.connect(
                client(ViReliabilityLevel.RELIABLE_RECEPTION), s.localAddress(), false, 64, TIMEOUT));
        assertEquals(VitcpConnectException.Reason.REJECTED,
                assertInstanceOf(VitcpConnectException.class, e.getCause()).reason()); // §3.3: levels must match
        ClientWire other = VitcpWire.client(vi(ViReliabilityLevel.RELIABLE_DELIVERY).build(), "other".getBytes());
        toClose.add(other);
        IOException n = assertThrows(IOException.class,
                () -> RpingClient.connect(other, s.localAddress(), false, 64, TIMEOUT));
        assertEquals(VitcpConnectException.Reason.NO_MATCH,
                assertInstanceOf(VitcpConnectException.class, n.getCause()).reason());
        assertEquals(0, s.accepted(), "the server's listener never saw either");
        normalPingStillWorks(s, client());
    }

    @Test
    void requiredCrcRejectsAClientWithoutTheCrcOption() throws Exception {
        RpingServer s = server(ViReliabilityLevel.RELIABLE_DELIVERY, 2, 0, true);
        ClientWire wire = client();
        IOException e = assertThrows(IOException.class,
                () -> RpingClient.connect(wire, s.localAddress(), false, 64, TIMEOUT));
        assertEquals(VitcpConnectException.Reason.REJECTED,
                assertInstanceOf(VitcpConnectException.class, e.getCause()).reason());
        try (RpingClient c = RpingClient.connect(wire, s.localAddress(), true, 64, TIMEOUT)) {
            assertTrue(c.connection().crc());
            assertArrayEquals(RpingClient.pingData(0, 'A', 64), c.ping(0));
        }
    }

    @Test
    void idleSessionsAreClosed() throws Exception {
        RpingServer s = server(ViReliabilityLevel.RELIABLE_DELIVERY, 2, 1, false);
        ClientWire wire = client();
        try (RpingClient c = RpingClient.connect(wire, s.localAddress(), false, 64, TIMEOUT)) {
            assertArrayEquals(RpingClient.pingData(0, 'A', 64), c.ping(0));
            assertTrue(c.connection().channel().closeFuture().await(20, TimeUnit.SECONDS), "closed by the server");
            awaitNoSessions(s);
            assertThrows(IOException.class, () -> c.ping(1));
        }
        normalPingStillWorks(s, wire);
    }

    @Test
    void unreliableVisServeEchoesButRefuseTheRdmaRead() throws Exception {
        // VIA: RDMA Read is not available on Unreliable VIs, so the rping Read completes NOT_SUPPORTED at serve
        RpingServer s = server(ViReliabilityLevel.UNRELIABLE, 2, 0, false);
        ClientWire wire = client(ViReliabilityLevel.UNRELIABLE);
        try (RpingClient c = RpingClient.connect(wire, s.localAddress(), false, 64, TIMEOUT)) {
            assertThrows(IOException.class, () -> c.ping(0));
            awaitNoSessions(s);
            assertEquals(0, s.lastSession().reads());
            assertEquals(0, s.lastSession().sends(), "no go-ahead without a completed Read");
        }
        BenchResult e = Bench.run(wire, s.localAddress(), Bench.Op.send, 100, 20, 0, 1, false, TIMEOUT,
                new java.util.concurrent.atomic.AtomicLong());
        assertEquals(20, e.iterations());
        assertEquals("VI/TCP Unreliable CRC off", e.summary());
    }
}
