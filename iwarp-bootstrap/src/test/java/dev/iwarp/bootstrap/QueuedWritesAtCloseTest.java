package dev.iwarp.bootstrap;

import ch.qos.logback.classic.Level;
import dev.iwarp.bootstrap.tls.TlsCertificates;
import dev.iwarp.bootstrap.tls.TlsPsk;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.ift.IftSettings;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.WriteBufferWaterMark;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A peer asks for Read Responses and stops reading, so that the responder's transmit side stalls with
 * work queued at every level (RDMAP's queued responses, FPDU or frame headers and payload slices or
 * copies in the outbound buffer, TLS records and the writes TLS holds); then the stream ends in each way
 * it can: the peer resets it, we close it, we close it gracefully (it cannot finish), or the stack shuts
 * its event loops down with the connection still open. Nothing may stay unreleased: the leak detector
 * runs at paranoid for every test and fails it on a report. Each case runs
 * {@code -Diwarp.test.closeRepeat=N} times (default 1), to hunt races between the endings and the stack's
 * shutdown.
 */
class QueuedWritesAtCloseTest {
    private static final int SIZE = 1 << 20;
    private static final int READS = 8;
    private static final int REPEAT = Integer.getInteger("iwarp.test.closeRepeat", 1);
    /** Only the setups whose names contain this ({@code -Diwarp.test.closeSetup=TLS}), to hunt in one. */
    private static final String ONLY = System.getProperty("iwarp.test.closeSetup", "");
    /**
     * The TLS handshake and the framing's startup get this long, not their 10 s defaults: what this test proves
     * does not depend on them, and a TLS handshake on a loop shared with paranoid leak tracking took longer than
     * 10 s at load 38 on 2 cores.
     */
    private static final long STARTUP_SECONDS = 120;
    private static final long STARTUP_MILLIS = STARTUP_SECONDS * 1000;

    /** How the stalled stream ends. */
    enum Ending {
        /** The peer closes with SO_LINGER 0: the responder sees a reset. */
        PEER_RESET,
        /** The responder closes the channel while its responses are queued. */
        LOCAL_CLOSE,
        /** The responder closes its queue pair gracefully (what is queued can never leave), then the stack stops. */
        GRACEFUL_THEN_SHUTDOWN,
        /** The responder's stack shuts its event loops down with the connection open and unwritable. */
        STACK_SHUTDOWN
    }

    /** The framing under the stream. */
    enum Setup {
        MPA_CRC, MPA_NO_CRC, MPA_MARKERS_CRC, MPA_MARKERS_NO_CRC, TLS_MPA, TLS_PSK_MPA, TLS_IFT, IFT_CRC, IFT_NO_CRC;

        Framing framing() {
            return switch (this) {
                case MPA_CRC, TLS_MPA, TLS_PSK_MPA -> mpa(true, false);
                case MPA_NO_CRC -> mpa(false, false);
                case MPA_MARKERS_CRC -> mpa(true, true);
                case MPA_MARKERS_NO_CRC -> mpa(false, true);
                case TLS_IFT, IFT_CRC -> IftFraming.of(IftSettings.builder().sendCrcs(true, true)
                        .checkCrcs(true, true).adaptionTimeout(STARTUP_SECONDS, TimeUnit.SECONDS).build());
                case IFT_NO_CRC -> IftFraming.of(IftSettings.builder().sendCrcs(false, false)
                        .checkCrcs(false, false).adaptionTimeout(STARTUP_SECONDS, TimeUnit.SECONDS).build());
            };
        }

        private static Framing mpa(boolean crc, boolean markers) {
            return MpaFraming.of(MpaSettings.builder().revision(2).crc(crc).markers(markers).acceptMarkers(markers)
                    .ird(READS).ord(READS).startupTimeout(STARTUP_SECONDS, TimeUnit.SECONDS).build());
        }

        TlsSettings serverTls() {
            return switch (this) {
                case TLS_MPA, TLS_IFT -> TlsSettings.builder().identity(Tls.SERVER).handshakeTimeoutMillis(STARTUP_MILLIS)
                        .build();
                case TLS_PSK_MPA -> TlsSettings.builder().psk(Tls.PSK).handshakeTimeoutMillis(STARTUP_MILLIS).build();
                default -> null;
            };
        }

        TlsSettings clientTls() {
            return switch (this) {
                case TLS_MPA, TLS_IFT -> TlsSettings.builder().trust(List.of(Tls.SERVER.certificate()))
                        .handshakeTimeoutMillis(STARTUP_MILLIS).build();
                case TLS_PSK_MPA -> TlsSettings.builder().psk(Tls.PSK).handshakeTimeoutMillis(STARTUP_MILLIS).build();
                default -> null;
            };
        }
    }

    /** Certificates made once, when a TLS case first runs. */
    private static final class Tls {
        static final TlsCertificates.CertifiedKey SERVER;
        static final TlsPsk PSK = TlsPsk.parse("node1:00112233445566778899aabbccddeeff");

        static {
            try {
                SERVER = TlsCertificates.selfSigned("server", Duration.ofDays(1));
            } catch (java.security.GeneralSecurityException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }

    static Stream<Arguments> cases() {
        List<Arguments> all = new ArrayList<>();
        for (Setup s : Setup.values()) {
            if (!s.name().contains(ONLY)) {
                continue;
            }
            for (Ending e : Ending.values()) {
                IntStream.range(0, REPEAT).forEach(i -> all.add(Arguments.of(s, e, i)));
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0} {1} #{2}")
    @MethodSource("cases")
    void everythingQueuedTowardsAStalledPeerIsReleased(Setup setup, Ending ending, int round) throws Exception {
        List<Channel> serverChannels = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicLong written = new AtomicLong();
        IwarpStack server = IwarpStack.builder().threads(1)
                .writeBufferWaterMark(new WriteBufferWaterMark(16 * 1024, 32 * 1024))
                .channelHook(ch -> {
                    ch.config().setOption(ChannelOption.SO_SNDBUF, 32 * 1024);
                    ch.pipeline().addFirst(new ChannelOutboundHandlerAdapter() { // what reaches the socket's queue
                        @Override
                        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                            if (msg instanceof ByteBuf b) {
                                written.addAndGet(b.readableBytes());
                            }
                            ctx.write(msg, promise);
                        }
                    });
                    serverChannels.add(ch);
                }).build();
        IwarpStack client = IwarpStack.builder().threads(1)
                .channelHook(ch -> ch.config().setOption(ChannelOption.SO_RCVBUF, 32 * 1024)).build();
        ByteBuf source = PooledByteBufAllocator.DEFAULT.directBuffer(SIZE, SIZE).writeZero(SIZE);
        ByteBuf sink = PooledByteBufAllocator.DEFAULT.directBuffer(SIZE, SIZE).writeZero(SIZE);
        boolean serverClosed = false;
        // an error thrown while the engine handles an exception (a queued message given back before its segments
        // were dropped) is only a Netty warning, and what is queued behind it is never released: fail on it
        dev.iwarp.testkit.LogCapture netty = dev.iwarp.testkit.LogCapture.of("io.netty");
        try {
            ProtectionDomain spd = server.allocPd();
            MemoryRegion target = spd.register(source, Access.REMOTE_READ);
            CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
            Channel listener = server.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                    ListenOptions.of(setup.framing()).tls(setup.serverTls()),
                    req -> accepted.complete(req.accept(spd, new CompletionQueue(), new CompletionQueue(), new byte[0])));
            ProtectionDomain cpd = client.allocPd();
            MemoryRegion into = cpd.register(sink, Access.LOCAL_WRITE);
            QueuePair qp = client.connect(listener.localAddress(), ConnectOptions.of(cpd).framing(setup.framing())
                    .tls(setup.clientTls())).get(STARTUP_SECONDS, TimeUnit.SECONDS);
            QueuePair serverQp = accepted.get(STARTUP_SECONDS, TimeUnit.SECONDS);
            Channel ch = serverQp.channel();
            qp.channel().config().setAutoRead(false); // the peer stops reading
            for (int r = 0; r < READS; r++) {
                qp.postSend(SendRequest.rdmaRead(r, into.slice(0, SIZE), target.stag(), target.iova()));
            }
            waitUntilUnwritable(ch, written::get);
            switch (ending) {
                case PEER_RESET -> {
                    qp.channel().config().setOption(ChannelOption.SO_LINGER, 0);
                    assertTrue(qp.channel().close().await(10, TimeUnit.SECONDS), "the peer closed");
                    assertTrue(ch.closeFuture().await(10, TimeUnit.SECONDS), "the reset closed the connection");
                }
                case LOCAL_CLOSE -> assertTrue(ch.close().await(10, TimeUnit.SECONDS), "our close completed");
                case GRACEFUL_THEN_SHUTDOWN -> {
                    serverQp.close();
                    Thread.sleep(50);
                    assertTrue(ch.isOpen(), "what is queued cannot leave: the graceful close waits");
                }
                case STACK_SHUTDOWN -> assertTrue(ch.isOpen());
            }
            server.close();
            serverClosed = true;
            assertFalse(ch.isOpen(), "the stack's shutdown closed the connection");
            assertEquals(List.of(), netty.lines(Level.WARN, l -> l.contains("exceptionCaught()")),
                    "a handler threw while handling an exception");
        } finally {
            if (!serverClosed) {
                server.close();
            }
            netty.close();
            client.close();
            source.release();
            sink.release();
        }
    }

    /**
     * Waits until the channel cannot take more writes (the responder's transmit side has stalled) for as long as the
     * responder keeps writing ({@code written}: octets its pipeline wrote towards the socket): fails once it wrote
     * nothing for 60 s, never for slowness (a loop starved of CPU on a loaded machine, TLS records encrypted on it).
     */
    static void waitUntilUnwritable(Channel ch, LongSupplier written) throws InterruptedException {
        long seen = -1;
        long movedAt = System.nanoTime();
        while (ch.isWritable()) {
            long now = written.getAsLong();
            if (now != seen) {
                seen = now;
                movedAt = System.nanoTime();
            } else if (System.nanoTime() - movedAt > TimeUnit.SECONDS.toNanos(60)) {
                fail("the responder's channel never became unwritable: it wrote " + now + " octets, then nothing for "
                        + "60 s (open: " + ch.isOpen() + ", " + ch.bytesBeforeUnwritable() + " octets before unwritable)");
            }
            Thread.sleep(25);
        }
        Thread.sleep(50); // what the last writability change let through is queued too
    }
}
