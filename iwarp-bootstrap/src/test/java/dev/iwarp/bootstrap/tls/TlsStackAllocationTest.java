package dev.iwarp.bootstrap.tls;

import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IwarpPipeline;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.rdmap.engine.RdmaEngine;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.CompletionView;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaDevice;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.FastThreadLocalThread;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the whole stack over TLS (the TLS layer, the MPA framer without CRC in records of 2^14 octets, the RDMAP
 * engine bound to it, as the stack's own connections run it) allocates per 64 KiB RDMA Write and per 64 KiB RDMA
 * Read once warm, on each side, counted on the one thread that runs both ends
 * ({@code com.sun.management.ThreadMXBean}). A Write's sender seals the FPDUs of a registered region into records,
 * its receiver opens them and places the payload; a Read's requester sends the Read Request and places the
 * Response, its responder seals the Response from its region. Octets allocated are exact for a code path (unlike
 * times): the bound holds on a loaded machine. The harness allocates nothing per message.
 */
class TlsStackAllocationTest {
    private static final int SIZE = 64 * 1024;
    private static final int WARMUP = 2_000;
    private static final int MEASURED = 1_000;
    /** Octets per 64 KiB message each side may allocate. */
    private static final double LIMIT = 1024;
    private static final TlsCertificates.CertifiedKey SELF;

    static {
        try {
            SELF = TlsCertificates.selfSigned("stack-allocation", Duration.ofDays(1));
        } catch (java.security.GeneralSecurityException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Octets allocated per message by each side: the Write's sender and receiver, the Read's requester and responder. */
    record Figures(TlsProvider provider, double writeSender, double writeReceiver, double readRequester,
                   double readResponder) {
        @Override
        public String toString() {
            return String.format("%-8s Write sender %8.1f receiver %8.1f B/message; Read requester %8.1f responder %8.1f"
                    + " B/message", provider, writeSender, writeReceiver, readRequester, readResponder);
        }
    }

    @Test
    void defaultProviderAllocatesUnderOneKibPerMessageOnEachSide() throws Exception {
        Figures f = onEventLoopThread(() -> measure(null));
        assertTrue(f.writeSender() <= LIMIT && f.writeReceiver() <= LIMIT && f.readRequester() <= LIMIT
                && f.readResponder() <= LIMIT, f.toString());
    }

    /**
     * Every provider available here, measured the same way, into {@code target/tls-stack-allocation.txt} (tests
     * print nothing).
     */
    @Test
    void everyProviderIsMeasured() throws Exception {
        List<String> lines = new ArrayList<>();
        for (TlsProvider p : TlsProvider.values()) {
            lines.add(p.isAvailable() ? onEventLoopThread(() -> measure(p)).toString()
                    : String.format("%-8s not available here", p));
        }
        Files.write(Path.of("target", "tls-stack-allocation.txt"), lines, StandardCharsets.UTF_8);
        assertEquals(TlsProvider.values().length, lines.size());
    }

    /**
     * {@code task} on a thread of the kind Netty's event loops run on (Netty's recyclers keep objects only on such
     * threads), with the paranoid leak detector off: it records every access of a tracked buffer (a stack trace
     * each), so that the count is the stack's own.
     */
    private static <T> T onEventLoopThread(Callable<T> task) throws Exception {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        try {
            List<T> result = new ArrayList<>();
            Throwable[] thrown = new Throwable[1];
            Thread t = new FastThreadLocalThread(() -> {
                try {
                    result.add(task.call());
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
            return result.get(0);
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }

    /** {@code provider} null: the settings' default. */
    private static Figures measure(TlsProvider provider) throws Exception {
        TlsSettings.Builder server = TlsSettings.builder().identity(SELF);
        TlsSettings.Builder client = TlsSettings.builder().pin(SELF.fingerprint());
        if (provider != null) {
            server.provider(provider);
            client.provider(provider);
        }
        TlsSettings serverTls = server.build();
        try (Pair pair = new Pair(serverTls, client.build())) {
            double[] write = pair.run(SendRequest.rdmaWrite(0, pair.local.all(), pair.remote.stag(), pair.remote.iova()));
            double[] read = pair.run(SendRequest.rdmaRead(0, pair.local.all(), pair.remote.stag(), pair.remote.iova()));
            String engine = pair.c.pipeline().get(io.netty.handler.ssl.SslHandler.class).engine().getClass().getName();
            TlsProvider measured = provider != null ? provider : serverTls.provider();
            assertTrue(engine.contains(measured == TlsProvider.OPENSSL ? "OpenSsl" : measured == TlsProvider.JDK
                    ? "sun.security" : "bouncycastle"), measured + " measured on " + engine);
            return new Figures(measured, write[0], write[1], read[0], read[1]);
        }
    }

    /** Two stacks over TLS back to back in memory: the client's engine is the Initiator, the server's the Responder. */
    private static final class Pair implements AutoCloseable {
        final RdmaDevice device = new RdmaDevice();
        final ProtectionDomain pd = device.allocPd();
        final EmbeddedChannel c = new EmbeddedChannel();
        final EmbeddedChannel s = new EmbeddedChannel();
        final ByteBuf clientMemory = PooledByteBufAllocator.DEFAULT.directBuffer(SIZE, SIZE).writeZero(SIZE);
        final ByteBuf serverMemory = PooledByteBufAllocator.DEFAULT.directBuffer(SIZE, SIZE).writeZero(SIZE);
        final MemoryRegion local = pd.register(clientMemory, Access.LOCAL_WRITE);
        final MemoryRegion remote = pd.register(serverMemory, Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                Access.REMOTE_READ);
        final CompletionQueue clientSendCq = new CompletionQueue();
        final QueuePair qp;
        long completed;
        long failed;

        Pair(TlsSettings serverTls, TlsSettings clientTls) {
            clientSendCq.setReusingListener(this::completed);
            // as compare's TLS cases run it: no CRC (TLS protects the stream), records of 2^14 octets
            MpaSettings mpa = MpaSettings.builder().crc(false).ird(16).ord(16).build();
            Framing framing = MpaFraming.of(mpa).overTls(TlsSettings.MAX_RECORD_PAYLOAD);
            RdmaEngine engine = new RdmaEngine(pd, clientSendCq, new CompletionQueue());
            qp = engine.queuePair();
            TlsLayer.addServer(s.pipeline(), serverTls, p -> IwarpPipeline.addResponder(p, framing,
                    req -> req.accept(pd, new CompletionQueue(), new CompletionQueue(), new byte[0])));
            TlsLayer.addClient(c.pipeline(), clientTls, null, p -> {
                IwarpPipeline.addInitiator(p, framing);
                IwarpPipeline.bindEngine(p, engine);
            });
            for (int i = 0; i < 100 && !qp.established().isDone(); i++) {
                move(c, s);
                move(s, c);
            }
            assertTrue(qp.established().isSuccess(), "startup: " + qp.established().cause());
            move(s, c);
        }

        private void completed(CompletionView done) {
            if (done.isSuccess()) {
                completed++;
            } else {
                failed++;
            }
        }

        /** Octets per message allocated by the side that posts {@code request} and by its peer. */
        double[] run(SendRequest request) {
            var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long before = completed;
            long local = 0;
            long peer = 0;
            for (int i = 0; i < WARMUP + MEASURED; i++) {
                long a0 = threads.getCurrentThreadAllocatedBytes();
                qp.postSend(request);
                c.runPendingTasks();
                long a1 = threads.getCurrentThreadAllocatedBytes();
                deliver(c, s);
                long a2 = threads.getCurrentThreadAllocatedBytes();
                deliver(s, c);
                long a3 = threads.getCurrentThreadAllocatedBytes();
                if (i >= WARMUP) {
                    local += (a1 - a0) + (a3 - a2);
                    peer += a2 - a1;
                }
            }
            c.checkException();
            s.checkException();
            assertEquals(0, failed, "failed completions");
            assertEquals(WARMUP + MEASURED, completed - before, "completions");
            return new double[] {(double) local / MEASURED, (double) peer / MEASURED};
        }

        /** The records {@code from} wrote, read by {@code to} as a socket's reads would hand them up. */
        private static void deliver(EmbeddedChannel from, EmbeddedChannel to) {
            for (Object record = from.readOutbound(); record != null; record = from.readOutbound()) {
                to.pipeline().fireChannelRead(record);
            }
            to.pipeline().fireChannelReadComplete();
            to.runPendingTasks();
        }

        private static void move(EmbeddedChannel from, EmbeddedChannel to) {
            for (Object m = from.readOutbound(); m != null; m = from.readOutbound()) {
                to.writeInbound(m);
            }
            to.runPendingTasks();
            from.runPendingTasks();
        }

        @Override
        public void close() {
            c.finishAndReleaseAll();
            s.finishAndReleaseAll();
            device.close();
            clientMemory.release();
            serverMemory.release();
        }
    }
}
