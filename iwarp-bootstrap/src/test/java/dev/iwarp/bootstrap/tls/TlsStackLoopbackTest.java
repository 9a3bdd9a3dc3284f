package dev.iwarp.bootstrap.tls;

import dev.iwarp.bootstrap.ListenOptions;
import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IftFraming;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.ift.IftSettings;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.Transport;
import dev.iwarp.mpa.MpaFramer;
import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.testkit.LogCapture;
import dev.iwarp.testkit.TestResources;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcOpcode;
import ch.qos.logback.classic.Level;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every RDMA operation between two {@link IwarpStack}s over MPA inside TLS 1.3 on 127.0.0.1, NIO and
 * epoll: certificates with client authentication, and an external PSK; sizes 0, 1, MULPDU-1, MULPDU,
 * MULPDU+1, 1 MiB and 16 MiB, where MULPDU comes from the TLS record size; and IFT in TLS.
 */
class TlsStackLoopbackTest {
    /** RFC 5044 §4.5 with EMSS = the TLS record payload 16384 (no markers). */
    static final int MULPDU = MpaFramer.mulpdu(TlsSettings.MAX_RECORD_PAYLOAD, false);

    private static final Framing MPA = MpaFraming.of(MpaSettings.builder().startupTimeout(120, TimeUnit.SECONDS)
            .build());

    @RegisterExtension
    final TestResources resources = new TestResources();
    /** Octets the stacks' sockets read: a slow transfer (a loaded machine) moves them, a stalled one does not. */
    private final java.util.concurrent.atomic.AtomicLong octetsIn = new java.util.concurrent.atomic.AtomicLong();
    /** Every connection either stack made. */
    private final Queue<Channel> connections = new ConcurrentLinkedQueue<>();

    static Stream<Arguments> certificateCases() {
        List<Arguments> a = new ArrayList<>();
        for (Transport t : Transport.values()) {
            for (int size : new int[] {0, 1, MULPDU - 1, MULPDU, MULPDU + 1, 1 << 20, 16 << 20}) {
                a.add(Arguments.of(t, size));
            }
        }
        return a.stream();
    }

    static Stream<Arguments> pskCases() {
        List<Arguments> a = new ArrayList<>();
        for (Transport t : Transport.values()) {
            for (int size : new int[] {0, 1, MULPDU - 1, MULPDU, MULPDU + 1, 1 << 20, 16 << 20}) {
                a.add(Arguments.of(t, size));
            }
        }
        return a.stream();
    }

    @ParameterizedTest(name = "{0} certificates, client auth, size {1}")
    @MethodSource("certificateCases")
    void everyOperationWithCertificates(Transport transport, int size) throws Exception {
        everyOperation(transport, size, TlsFixtures.server(TlsFixtures.SERVER), TlsFixtures.client(), MPA);
    }

    /** The providers other than the default (which the cases above run on), certificates and client auth each. */
    @ParameterizedTest(name = "{0} certificates on TLS provider {1}, size {2}")
    @CsvSource({"NIO, JDK, 16379", "EPOLL, JDK, 1048576", "NIO, BCJSSE, 1048576"})
    void everyOperationOnAnotherProvider(Transport transport, TlsProvider provider, int size) throws Exception {
        everyOperation(transport, size, TlsFixtures.server(TlsFixtures.SERVER).toBuilder().provider(provider).build(),
                TlsFixtures.client().toBuilder().provider(provider).build(), MPA);
    }

    @ParameterizedTest(name = "{0} IFT in TLS, size {1}")
    @CsvSource({"NIO, 1", "EPOLL, 1048576"})
    void everyOperationOverIftInTls(Transport transport, int size) throws Exception {
        everyOperation(transport, size, TlsFixtures.server(TlsFixtures.SERVER), TlsFixtures.client(),
                IftFraming.of(IftSettings.builder().adaptionTimeout(120, TimeUnit.SECONDS).build()));
    }

    @ParameterizedTest(name = "{0} external PSK, size {1}")
    @MethodSource("pskCases")
    void everyOperationWithPsk(Transport transport, int size) throws Exception {
        everyOperation(transport, size, TlsFixtures.psk(TlsFixtures.PSK), TlsFixtures.psk(TlsFixtures.PSK), MPA);
    }

    private void everyOperation(Transport transport, int size, TlsSettings serverSettings,
                                TlsSettings clientSettings, Framing framing) throws Exception {
        // what this test proves does not depend on the 10 s handshake default, which a loaded machine exceeded
        TlsSettings serverTls = serverSettings.toBuilder().handshakeTimeoutMillis(120_000).build();
        TlsSettings clientTls = clientSettings.toBuilder().handshakeTimeoutMillis(120_000).build();
        Assumptions.assumeTrue(transport != Transport.EPOLL || Transport.auto() == Transport.EPOLL, "no epoll here");
        IwarpStack server = stack(transport);
        IwarpStack client = stack(transport);
        int room = Math.max(size, 16);
        ProtectionDomain spd = server.allocPd();
        MemoryRegion target = spd.register(buffer(room, 0), Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                Access.REMOTE_READ, Access.REMOTE_ATOMIC);
        MemoryRegion recv = spd.register(buffer(2 * room, 0), Access.LOCAL_WRITE);
        CompletionQueue sRcq = new CompletionQueue();
        Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0),
                ListenOptions.of(framing).tls(serverTls), req -> {
                    QueuePair qp = req.accept(spd, new CompletionQueue(), sRcq, new byte[0]);
                    qp.postRecv(RecvRequest.of(100, recv.slice(0, size)));
                    qp.postRecv(RecvRequest.of(101, recv.slice(room, size)));
                    qp.postRecv(RecvRequest.of(102, recv.slice(0, 0)));
                });
        ProtectionDomain cpd = client.allocPd();
        MemoryRegion src = cpd.register(buffer(room, 7), Access.LOCAL_WRITE);
        MemoryRegion sink = cpd.register(buffer(room, 0), Access.LOCAL_WRITE);
        MemoryRegion result = cpd.register(buffer(16, 0), Access.LOCAL_WRITE);
        ConnectOptions opts = ConnectOptions.of(cpd).framing(framing).tls(clientTls);
        QueuePair qp = client.connect(listener.localAddress(), opts).get(120, TimeUnit.SECONDS);
        if (framing == MPA) {
            assertEquals(MULPDU, qp.connectionParameters().framing(MpaParameters.class).mulpdu(), "MULPDU from the record size");
        }

        qp.postSend(SendRequest.rdmaWrite(1, src.slice(0, size), target.stag(), target.iova()));
        qp.postSend(SendRequest.rdmaRead(2, sink.slice(0, size), target.stag(), target.iova()));
        qp.postSend(SendRequest.send(3, src.slice(0, size)));
        qp.postSend(SendRequest.send(4, src.slice(0, size)).solicited());
        qp.postSend(SendRequest.immediateData(5, 0xCAFEL));
        for (int wr = 1; wr <= 5; wr++) {
            Completion c = take(opts.sendCq());
            assertTrue(c.isSuccess(), c::toString);
            assertEquals(wr, c.wrId());
        }
        byte[] expected = new byte[size];
        src.memory().getBytes(0, expected);
        byte[] got = new byte[size];
        target.memory().getBytes(0, got);
        assertArrayEquals(expected, got, "Write");
        sink.memory().getBytes(0, got);
        assertArrayEquals(expected, got, "Read");
        Completion r1 = take(sRcq);
        assertEquals(size, r1.byteLength());
        recv.memory().getBytes(0, got);
        assertArrayEquals(expected, got, "Send");
        Completion r2 = take(sRcq);
        assertTrue(r2.solicited());
        recv.memory().getBytes(room, got);
        assertArrayEquals(expected, got, "Send with Solicited Event");
        Completion r3 = take(sRcq);
        assertEquals(WcOpcode.RECV_IMMEDIATE, r3.opcode());
        assertEquals(0xCAFEL, r3.immediateData());

        // the atomics (RFC 7306) on the first 8 octets of the target
        long before = target.memory().getLong(0);
        qp.postSend(SendRequest.fetchAdd(6, result.slice(0, 8), target.stag(), target.iova(), 5, 0));
        qp.postSend(SendRequest.compareSwap(7, result.slice(8, 8), target.stag(), target.iova(), before + 5, -1L, 42, -1L));
        for (int wr = 6; wr <= 7; wr++) {
            Completion c = take(opts.sendCq());
            assertTrue(c.isSuccess(), c::toString);
        }
        assertEquals(before, result.memory().getLong(0), "fetch-add returned the original");
        assertEquals(before + 5, result.memory().getLong(8), "compare-swap returned the added value");
        assertEquals(42, target.memory().getLong(0));
        try (LogCapture tlsLog = LogCapture.of("dev.iwarp.bootstrap.tls")) {
            qp.close().await(5, TimeUnit.SECONDS); // graceful (RFC 5040 §6.2.1): inside TLS ends with a close_notify
            for (Channel ch : connections) {
                assertTrue(ch.closeFuture().await(30, TimeUnit.SECONDS), "both ends closed after the graceful close");
                ch.eventLoop().submit(() -> { }).await(30, TimeUnit.SECONDS); // and ran their channelInactive
            }
            assertEquals(List.of(), tlsLog.lines(Level.WARN, l -> true), "no TLS warning at either end: neither saw"
                    + " TCP closed without a TLS close_notify (RFC 8446 §6.1), nor a record after its own");
        }
        listener.close().sync();
    }

    private IwarpStack stack(Transport t) {
        return resources.closeAfter(IwarpStack.builder().transport(t).threads(1).channelHook(ch -> {
            connections.add(ch);
            ch.pipeline().addFirst(new io.netty.channel.ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
                    if (msg instanceof ByteBuf) {
                        octetsIn.addAndGet(((ByteBuf) msg).readableBytes());
                    }
                    ctx.fireChannelRead(msg);
                }
            });
        }).build());
    }

    private ByteBuf buffer(int size, int seed) {
        return resources.buffer(size, 13, seed);
    }

    /**
     * The next completion, waited for as long as octets keep arriving at either stack's sockets: fails once none
     * arrived for 60 s (a stall), never for slowness. A fixed 30 s failed for 16 MiB at load 70 on 2 cores.
     */
    private Completion take(CompletionQueue cq) throws InterruptedException {
        long seen = -1;
        long movedAt = 0;
        for (;;) {
            Completion c = cq.take(1, TimeUnit.SECONDS);
            if (c != null) {
                return c;
            }
            long now = octetsIn.get();
            if (now != seen) {
                seen = now;
                movedAt = System.nanoTime();
            } else if (System.nanoTime() - movedAt > TimeUnit.SECONDS.toNanos(60)) {
                assertNotNull(c, "no completion, and no octet arrived for 60 s");
            }
        }
    }
}
