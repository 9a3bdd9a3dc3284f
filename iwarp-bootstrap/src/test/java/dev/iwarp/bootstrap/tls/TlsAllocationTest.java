package dev.iwarp.bootstrap.tls;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.FastThreadLocalThread;
import io.netty.util.concurrent.Future;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the certificate path's TLS layer ({@link TlsLayer}: the first-record check, Netty's {@code SslHandler}
 * over the settings' {@link TlsProvider}, the lifecycle handler) allocates per 64 KiB message once warm, on each
 * side, counted on the one thread that runs both ends ({@code com.sun.management.ThreadMXBean}): the client seals
 * a pooled direct 64 KiB buffer into records, the server opens them and hands the plaintext up. Octets allocated
 * are exact for a code path (unlike times): the bound holds on a loaded machine. The harness allocates a promise
 * per message on the client and nothing on the server.
 */
class TlsAllocationTest {
    private static final int SIZE = 64 * 1024;
    private static final int WARMUP = 2_000;
    private static final int MEASURED = 1_000;
    /** Octets per 64 KiB message each side may allocate (Bouncy Castle's JSSE: about twice the payload). */
    private static final double LIMIT = 1024;
    private static final TlsCertificates.CertifiedKey SELF;

    static {
        try {
            SELF = TlsCertificates.selfSigned("allocation", Duration.ofDays(1));
        } catch (java.security.GeneralSecurityException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Octets allocated per message by the client's and the server's TLS layer. */
    record Figures(TlsProvider provider, double client, double server) {
        @Override
        public String toString() {
            return String.format("%-8s client %9.1f B/message, server %9.1f B/message", provider, client, server);
        }
    }

    @Test
    void defaultProviderAllocatesUnderOneKibPerMessageOnEachSide() throws Exception {
        Figures f = measure(null);
        assertTrue(f.client() <= LIMIT && f.server() <= LIMIT, f.toString());
    }

    /**
     * Every provider available here, measured the same way, into {@code target/tls-allocation.txt} (tests print
     * nothing): the figures behind the default.
     */
    @Test
    void everyProviderIsMeasured() throws Exception {
        List<String> lines = new ArrayList<>();
        for (TlsProvider p : TlsProvider.values()) {
            lines.add(p.isAvailable() ? measure(p).toString() : String.format("%-8s not available here", p));
        }
        Files.write(Path.of("target", "tls-allocation.txt"), lines, StandardCharsets.UTF_8);
        assertEquals(TlsProvider.values().length, lines.size());
    }

    /** {@code provider} null: the settings' default. */
    private static Figures measure(TlsProvider provider) throws Exception {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        // the paranoid leak detector records every access of a tracked buffer (a stack trace each): off while the
        // buffers of the run are made and used, so that the count is the TLS layer's own
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        try {
            Figures[] result = new Figures[1];
            Throwable[] thrown = new Throwable[1];
            // a thread of the kind Netty's event loops run on: Netty's recyclers keep objects only on such threads
            Thread t = new FastThreadLocalThread(() -> {
                try {
                    result[0] = run(provider);
                } catch (Throwable e) {
                    thrown[0] = e;
                }
            });
            t.start();
            t.join();
            if (thrown[0] instanceof Exception) {
                throw (Exception) thrown[0];
            }
            if (thrown[0] != null) {
                throw new AssertionError(thrown[0]);
            }
            return result[0];
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }

    private static Figures run(TlsProvider provider) throws Exception {
        TlsSettings.Builder server = TlsSettings.builder().identity(SELF);
        TlsSettings.Builder client = TlsSettings.builder().pin(SELF.fingerprint());
        if (provider != null) {
            server.provider(provider);
            client.provider(provider);
        }
        TlsSettings serverTls = server.build();
        EmbeddedChannel c = new EmbeddedChannel();
        EmbeddedChannel s = new EmbeddedChannel();
        Sink sink = new Sink();
        ByteBuf payload = ByteBufAllocator.DEFAULT.directBuffer(SIZE);
        try {
            Future<Channel> serverUp = TlsLayer.addServer(s.pipeline(), serverTls, p -> p.addLast(sink));
            Future<Channel> clientUp = TlsLayer.addClient(c.pipeline(), client.build(), null, p -> { });
            for (int i = 0; i < 50 && !(serverUp.isDone() && clientUp.isDone()); i++) {
                move(c, s);
                move(s, c);
            }
            assertTrue(clientUp.isSuccess() && serverUp.isSuccess(), "handshake: " + clientUp.cause() + " / " + serverUp.cause());
            move(s, c); // TLS 1.3's session tickets
            byte[] random = new byte[SIZE];
            ThreadLocalRandom.current().nextBytes(random);
            payload.writeBytes(random);
            var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long clientBytes = 0;
            long serverBytes = 0;
            for (int i = 0; i < WARMUP + MEASURED; i++) {
                long a0 = threads.getCurrentThreadAllocatedBytes();
                c.writeAndFlush(payload.retainedDuplicate());
                long a1 = threads.getCurrentThreadAllocatedBytes();
                for (Object record = c.readOutbound(); record != null; record = c.readOutbound()) {
                    s.pipeline().fireChannelRead(record);
                }
                s.pipeline().fireChannelReadComplete();
                long a2 = threads.getCurrentThreadAllocatedBytes();
                if (i >= WARMUP) {
                    clientBytes += a1 - a0;
                    serverBytes += a2 - a1;
                }
            }
            c.checkException();
            s.checkException();
            assertEquals((long) (WARMUP + MEASURED) * SIZE, sink.octets, "octets delivered");
            String engine = c.pipeline().get(io.netty.handler.ssl.SslHandler.class).engine().getClass().getName();
            TlsProvider measured = provider != null ? provider : serverTls.provider();
            assertTrue(engine.contains(measured == TlsProvider.OPENSSL ? "OpenSsl" : measured == TlsProvider.JDK ? "sun.security"
                    : "bouncycastle"), measured + " measured on " + engine);
            return new Figures(measured, (double) clientBytes / MEASURED, (double) serverBytes / MEASURED);
        } finally {
            payload.release();
            c.finishAndReleaseAll();
            s.finishAndReleaseAll();
        }
    }

    private static void move(EmbeddedChannel from, EmbeddedChannel to) {
        for (Object m = from.readOutbound(); m != null; m = from.readOutbound()) {
            to.writeInbound(m);
        }
        to.runPendingTasks();
        from.runPendingTasks();
    }

    /** The layers above TLS: counts the plaintext and releases it. */
    private static final class Sink extends ChannelInboundHandlerAdapter {
        long octets;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            octets += ((ByteBuf) msg).readableBytes();
            ((ByteBuf) msg).release();
        }
    }
}
