package dev.iwarp.benchmarks;

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
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.FastThreadLocalThread;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The whole stack's Java work per RDMA Write, without sockets: two stacks (RDMAP engine, MPA framer with CRC) on
 * {@link EmbeddedChannel}s back to back, on one thread. What the event loops of {@code compare}'s small-message
 * cases spend outside the kernel, measured without the kernel's and the scheduler's noise, so that a change to the
 * engine's per-message path can be judged in nanoseconds (then confirmed with {@code compare}).
 *
 * <p>As {@code compare}'s Write client, {@value #DEPTH} Writes are posted and each completion (to a reusing
 * listener) posts the next, {@value #WRITES} per invocation: the engine's transmit loop writes what the completions
 * it reports post, as it does on a socket while the channel stays writable (an {@link EmbeddedChannel} always is).
 *
 * <ul>
 *   <li>{@link #send}: the Initiator's work (the sender's loop of {@code compare}'s Write cases); what it wrote
 *       is released unread.</li>
 *   <li>{@link #sendAndPlace}: the same, and what it wrote is read by the Responder's stack in one read batch
 *       (FPDUs checked and placed into the registered region): both loops' work.</li>
 * </ul>
 *
 * <p>One operation is one Write.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {
        "-Dio.netty.leakDetection.level=disabled",
        // Run on FastThreadLocalThreads like an event loop (see EventLoopThreadExecutor).
        "-Djmh.executor=CUSTOM",
        "-Djmh.executor.class=dev.iwarp.benchmarks.EventLoopThreadExecutor"})
public class StackMessageBenchmark {
    /** Writes outstanding: {@code compare}'s default send queue depth. */
    public static final int DEPTH = 16;
    /** Writes per invocation. */
    public static final int WRITES = 256;

    /** The first octet the Writes carry; octet i is {@code PATTERN + i} (mod 256). */
    static final int PATTERN = 0x5A;

    /** Octets per Write. */
    @Param({"1024"})
    public int size;

    /** CRC32C generated and checked. */
    @Param({"true"})
    public boolean crc;

    private RdmaDevice device;
    private EmbeddedChannel c;
    private EmbeddedChannel s;
    private ByteBuf clientMemory;
    ByteBuf serverMemory;
    private QueuePair qp;
    private SendRequest write;
    long completed;
    long failed;
    /** Writes the current invocation may still post. */
    private int toPost;

    @Setup(Level.Trial)
    public void setUp() {
        if (!FastThreadLocalThread.currentThreadWillCleanupFastThreadLocals()) {
            throw new IllegalStateException("run on FastThreadLocalThreads: -Djmh.executor=CUSTOM -Djmh.executor.class="
                    + EventLoopThreadExecutor.class.getName() + " when overriding -jvmArgsAppend");
        }
        device = new RdmaDevice();
        ProtectionDomain pd = device.allocPd();
        clientMemory = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        for (int i = 0; i < size; i++) {
            clientMemory.writeByte(PATTERN + i); // what the Responder's region holds once a Write was placed
        }
        serverMemory = PooledByteBufAllocator.DEFAULT.directBuffer(size, size).writeZero(size);
        MemoryRegion local = pd.register(clientMemory, Access.LOCAL_WRITE);
        MemoryRegion remote = pd.register(serverMemory, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        CompletionQueue sendCq = new CompletionQueue();
        sendCq.setReusingListener(this::completed);
        Framing framing = MpaFraming.of(MpaSettings.builder().crc(crc).ird(16).ord(16).build());
        RdmaEngine engine = new RdmaEngine(pd, sendCq, new CompletionQueue());
        qp = engine.queuePair();
        c = new EmbeddedChannel();
        s = new EmbeddedChannel();
        IwarpPipeline.addResponder(s.pipeline(), framing,
                req -> req.accept(pd, new CompletionQueue(), new CompletionQueue(), new byte[0]));
        IwarpPipeline.addInitiator(c.pipeline(), framing);
        IwarpPipeline.bindEngine(c.pipeline(), engine);
        for (int i = 0; i < 100 && !qp.established().isDone(); i++) {
            deliver(c, s);
            deliver(s, c);
        }
        if (!qp.established().isSuccess()) {
            throw new IllegalStateException("startup failed", qp.established().cause());
        }
        deliver(s, c);
        write = SendRequest.rdmaWrite(0, local.all(), remote.stag(), remote.iova());
    }

    private void completed(CompletionView done) {
        if (done.isSuccess()) {
            completed++;
        } else {
            failed++;
        }
        if (toPost > 0) {
            toPost--;
            qp.postSend(write);
        }
    }

    @Benchmark
    @OperationsPerInvocation(WRITES)
    public long send() {
        post();
        for (Object m = c.readOutbound(); m != null; m = c.readOutbound()) {
            ReferenceCountUtil.release(m);
        }
        return completed;
    }

    @Benchmark
    @OperationsPerInvocation(WRITES)
    public long sendAndPlace() {
        post();
        deliver(c, s);
        return completed;
    }

    private void post() {
        long end = completed + WRITES;
        toPost = WRITES - DEPTH;
        for (int i = 0; i < DEPTH; i++) {
            qp.postSend(write);
        }
        while (completed + failed < end) {
            long before = completed + failed;
            c.runPendingTasks();
            if (completed + failed == before) {
                throw new IllegalStateException("Writes stopped completing: " + (end - before) + " to go");
            }
        }
        c.flush();
    }

    /** What {@code from} wrote, read by {@code to} in one read batch, as a socket's reads would hand it up. */
    private static void deliver(EmbeddedChannel from, EmbeddedChannel to) {
        for (Object m = from.readOutbound(); m != null; m = from.readOutbound()) {
            to.pipeline().fireChannelRead(m);
        }
        to.pipeline().fireChannelReadComplete();
        to.runPendingTasks();
        from.runPendingTasks();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (failed != 0) {
            throw new IllegalStateException(failed + " Writes failed");
        }
        c.finishAndReleaseAll();
        s.finishAndReleaseAll();
        device.close();
        clientMemory.release();
        serverMemory.release();
    }
}
