package dev.iwarp.server;

import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.WireCompletionListener;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBuf;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static dev.iwarp.server.BenchWrIds.KIND_CHECK;
import static dev.iwarp.server.BenchWrIds.KIND_HELLO;
import static dev.iwarp.server.BenchWrIds.KIND_MAIN;
import static dev.iwarp.server.BenchWrIds.KIND_RECV;
import static dev.iwarp.server.BenchWrIds.KIND_SETUP;
import static dev.iwarp.server.BenchWrIds.kindOf;
import static dev.iwarp.server.BenchWrIds.slotOf;
import static dev.iwarp.server.BenchWrIds.wr;

/**
 * One connection of {@code bench}, driven like perftest: every completion callback (on the connection's event
 * loop) records the finished iteration and posts the next, keeping {@code depth} iterations in flight; no thread
 * blocks per completion. An iteration is one Write, Read or Send (its echo); with verify, a Write and a Read of the
 * same slot of the target region (the Write's data read back, or the Read's data written first), checked octet
 * for octet against {@link BenchPattern}. Completions of a connection's send queue arrive in posting order
 * (RFC 5040 §5.5; VI work queues), and so do its receives. Its work-request ids: {@link BenchWrIds}.
 */
final class BenchConnection implements WireCompletionListener {
    /** The least of {@link #postsPerFill}: a task per so many posts is noise next to their cost. */
    static final int MIN_POSTS_PER_FILL = 64;

    private final BenchSettings s;
    private final WireDomain domain;
    private final BenchMemory memory;
    private WireConnection conn;
    private final CompletableFuture<Integer> helloAnswer = new CompletableFuture<>();

    private Advertisement target;
    private long targetBase;
    private int slots;
    private int depth;

    // event-loop state
    private long next;          // iterations posted on this connection, all phases: the pattern's iteration
    private long sendsDone;     // Sends completed (send op), all phases
    private long echoes;        // echoes received (send op), all phases
    private long mainsDone;     // iterations whose main request completed, all phases: they come in posting order
    private SignaledIterations signaled; // main requests posted signaled, in flight
    private int signalEvery = 1; // a main request signaled in this many (and the last of each burst of posts)
    private boolean filling;
    /** A task that goes on posting ({@link #resumeLater}) is queued. */
    private boolean resumeQueued;
    private final Runnable resume = () -> {
        resumeQueued = false;
        fill(0);
        maybeFinish();
    };
    private long checksDone;    // KIND_CHECK completions (write --verify), all phases
    private long done;          // iterations completed, all phases
    /** {@link #done} when the current phase began: the phase's iterations are those completed after it. */
    private long phaseStart;
    /** Iterations of the current phase, counting those in flight when it began. */
    private long budget;
    /**
     * When each iteration in flight was posted, at {@code it & (length - 1)}: a power of two at least {@code depth}
     * long, so that the index is a mask, not a 64-bit division (two per message at 2 million messages a second).
     */
    private long[] postedAt;
    private CompletableFuture<Void> phase;
    private IOException failure;
    private volatile boolean closing;
    private volatile boolean stopPosting;
    /** Its event loop's latency histogram ({@link BenchLatency}), set before any phase. */
    private Histogram latency;
    volatile long verifiedOctets;
    volatile long finishedAt;
    /**
     * Iterations completed, all phases, for {@link WarmupWatch} and {@link Meter}: one count whatever the phase, so
     * that the measured phase runs the very code the warm-up ran and the JIT compiled (a branch first taken when
     * measuring starts sends that code back to the interpreter: the loops' whole path was recompiled then, at half
     * the rate for the measured phase's first second on a 2-core machine).
     */
    private final SingleWriterCounter completedIterations = new SingleWriterCounter();
    /** {@link #completedIterations} when the measured phase began on the event loop; -1 before. */
    private volatile long measuredFrom = -1;
    /** When the measured phase began on the event loop ({@link System#nanoTime}). */
    volatile long measuredSince;
    /** Completions of any kind, for {@link Bench}'s check that a connection still completes work. */
    private final SingleWriterCounter completions = new SingleWriterCounter();

    private BenchConnection(int index, BenchSettings s, WireDomain domain) {
        this.s = s;
        this.domain = domain;
        memory = new BenchMemory(s, index, domain);
    }

    /** Connects (and for Sends exchanges the {@link BenchHello}); {@link #plan} must follow before any phase. */
    static BenchConnection open(ClientWire wire, InetSocketAddress server, int index, BenchSettings s)
            throws IOException {
        BenchConnection c = new BenchConnection(index, s, wire.allocDomain());
        try {
            boolean reads = s.op() == Bench.Op.read || s.verify();
            c.conn = wire.connect(server, c.domain, s.crc(), reads ? s.depth() : 1, c, x -> { }, s.timeoutMs());
            if (s.op() == Bench.Op.send) {
                c.exchangeHello();
            } else {
                byte[] setup = c.conn.peerData();
                if (setup.length != Advertisement.LENGTH) {
                    throw new IOException("the server advertised no target region in its " + wire.setupCarrier()
                            + " (got " + setup.length + " octets; serve --target-size)");
                }
                c.target = Advertisement.decode(setup);
                if (s.size() > c.target.sizeUnsigned()) {
                    throw new IOException("size " + s.size() + " exceeds the server's target region ("
                            + wire.remoteRegion(c.target.to(), c.target.stag(), c.target.sizeUnsigned()) + ")");
                }
            }
            return c;
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    private void exchangeHello() throws IOException {
        WireRegion hello = memory.hello();
        BenchHello.writeRequest(memory.helloMemory(), 0, s.size(), s.depth());
        conn.postRecv(wr(0, KIND_HELLO), hello, BenchHello.LENGTH, BenchHello.LENGTH);
        conn.postSend(wr(0, KIND_HELLO), hello, 0, BenchHello.LENGTH);
        try {
            depth = Math.max(1, Math.min(s.depth(), helloAnswer.get(s.timeoutMs(), TimeUnit.MILLISECONDS)));
            depth = (int) Math.min(depth, Math.max(1, BenchMemory.MAX_BUFFER / s.size()));
        } catch (TimeoutException e) {
            throw new IOException("no answer to the bench hello within " + s.timeoutMs() + " ms", e);
        } catch (ExecutionException e) {
            throw new IOException(e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        slots = depth;
        for (int slot = 0; slot < depth; slot++) {
            conn.postRecv(wr(slot, KIND_RECV), memory.sink, slot * s.size(), s.size());
        }
    }

    /**
     * Fixes where this connection's iterations go: {@code share} octets of the target region from {@code base}
     * (its part when connections share one region); with verify one slot per iteration in flight.
     */
    void plan(long base, long share) throws IOException {
        if (s.op() == Bench.Op.send) {
            postedAt = new long[SignaledIterations.ringLength(depth)];
            signaling();
            return;
        }
        targetBase = base;
        slots = s.verify()
                ? (int) Math.min(Math.min(s.depth(), share / s.size()), Math.max(1, BenchMemory.MAX_BUFFER / s.size()))
                : 1;
        if (slots < 1) {
            throw new IOException("--verify needs " + s.size() + " octets of the server's target region per "
                    + "connection; its " + target.sizeUnsigned() + " octets are shared by too many connections "
                    + "(fewer --connections, a smaller --size, or serve --target-size)");
        }
        boolean reads = s.op() == Bench.Op.read || s.verify();
        depth = Math.max(1, reads ? Math.min(s.depth(), conn.readDepth()) : s.depth());
        if (s.verify()) {
            depth = Math.min(depth, slots);
        }
        postedAt = new long[SignaledIterations.ringLength(depth)];
        signaling();
    }

    /** How often a main request goes signaled: --cq-mod, where the wire can leave successes unreported. */
    private void signaling() {
        signalEvery = s.verify() || !conn.signalsSelectively() ? 1 : Math.max(1, Math.min(s.cqMod(), depth));
        signaled = new SignaledIterations(depth);
    }

    /** Main requests per signaled one (1: every one). */
    int signalEvery() {
        return signalEvery;
    }

    WireConnection connection() {
        return conn;
    }

    int depth() {
        return depth;
    }

    /** Sets the histogram its latencies go to; before any phase. */
    void latency(Histogram h) {
        latency = h;
    }

    /** Octets of the iterations completed since the measured phase began (0 before); from any thread. */
    long measuredOctets() {
        long from = measuredFrom;
        return from < 0 ? 0 : (completedIterations.get() - from) * s.size();
    }

    /** Iterations completed so far, all phases; from any thread. */
    long completedIterations() {
        return completedIterations.get();
    }

    /** Completions of any kind so far; from any thread. */
    long completions() {
        return completions.get();
    }

    /**
     * Begins a phase of {@code iterations} (or until {@link #stop}) that {@code f} ends; on the event loop. What is
     * in flight belongs to it: a measured phase that follows the warm-up takes over the warm-up's iterations in
     * flight instead of waiting for them, so that the loop runs on as it ran (no drained queue to refill, no code
     * path the warm-up did not take). {@code measured}: the phase whose octets {@link #measuredOctets} counts.
     */
    void begin(CompletableFuture<Void> f, long iterations, boolean measured) {
        if (failure != null) {
            f.completeExceptionally(failure);
            return;
        }
        phase = f;
        phaseStart = done;
        budget = iterations;
        if (measured) {
            measuredSince = System.nanoTime();
            measuredFrom = done;
        }
        fill(0);
        maybeFinish();
    }

    /** Ends a timed phase: no more posts; the phase completes when what is in flight did. */
    void stop() {
        stopPosting = true;
        conn.channel().eventLoop().execute(this::maybeFinish);
    }

    /**
     * Posts while fewer than {@code depth} iterations are in flight, in bursts of what the window allows, each
     * ending with a signaled request ({@link SignaledIterations}): a burst is posted whole once begun, even if a
     * timed phase stops meanwhile, so that what it posted completes. {@code now}: the clock read of the completion
     * that calls this (0: none), taken as the first post's time: one clock read per message instead of two (a
     * read costs ~25 ns on a VM), and the post follows within the completion's bookkeeping; unsignaled posts,
     * which have no latency, read none.
     */
    private void fill(long now) {
        if (filling) {
            return; // a completion that ran inside a post: the loop below posts what it allows
        }
        filling = true;
        try {
            int n;
            int postsLeft = postsPerFill();
            while ((n = window()) > 0) { // a burst: its last request goes signaled
                if (postsLeft == 0) {
                    resumeLater();
                    break;
                }
                n = Math.min(n, postsLeft);
                postsLeft -= n;
                long first = next;
                for (int k = 0; k < n && failure == null; k++) {
                    long it = next++; // before posting: a completion may run inside the post call and look at it
                    boolean signal = SignaledIterations.signaled(it, first, n, signalEvery);
                    if (signal) {
                        signaled.add(it);
                    }
                    // a Send's latency runs to its echo, which every iteration has: each post reads the clock
                    boolean timed = signal || s.op() == Bench.Op.send;
                    post(it, !timed ? 0 : k == 0 && now != 0 ? now : System.nanoTime(), signal);
                }
            }
        } finally {
            filling = false;
        }
    }

    /**
     * Posts one call of {@link #fill} makes at the most: a Write completes inside its post when the transmit that
     * post runs flushes it at once, and that completion opens the window again, so a call without a bound posted for
     * as long as the socket took data (a whole timed phase on an unloaded receiver) and the event loop ran nothing
     * else meanwhile: not the other connections it serves, not the task that begins the measured phase.
     */
    private int postsPerFill() {
        return Math.max(MIN_POSTS_PER_FILL, 4 * depth);
    }

    /** The rest of what the window allows, from a task of its own: the loop's I/O and other tasks go first. */
    private void resumeLater() {
        if (!resumeQueued) {
            resumeQueued = true;
            conn.channel().eventLoop().execute(resume);
        }
    }

    /** How many iterations may be posted now. */
    private int window() {
        if (stopPosting || failure != null) {
            return 0;
        }
        return (int) Math.max(0, Math.min(depth - (next - completedAll()), budget - (next - phaseStart)));
    }

    private long completedAll() {
        return s.op() == Bench.Op.send ? Math.min(sendsDone, echoes) : done;
    }

    private void post(long it, long now, boolean signal) {
        int size = s.size();
        int slot = (int) wrSlot(it); // 0 unless verify or Sends: then each posts from the same offsets
        // a work request carries the slot its offsets depend on, not the iteration: the same request repeats and
        // the wire posts it again without a new object; completions count the iteration back (posting order)
        long main = wr(slot, KIND_MAIN);
        int local = slot * size;
        long remote = target == null ? 0 : target.to() + targetBase + (s.verify() ? (long) slot * size : 0);
        postedAt[(int) it & (postedAt.length - 1)] = now;
        if (s.verify()) {
            memory.writePattern(local, it);
        }
        WireRegion src = memory.src;
        WireRegion sink = memory.sink;
        switch (s.op()) {
            case write -> {
                conn.postRdmaWrite(main, src, local, size, remote, target.stag(), signal);
                if (s.verify()) {
                    conn.postRdmaRead(wr(slot, KIND_CHECK), sink, local, size, remote, target.stag());
                }
            }
            case read -> {
                if (s.verify()) {
                    conn.postRdmaWrite(wr(slot, KIND_SETUP), src, local, size, remote, target.stag());
                }
                conn.postRdmaRead(main, sink, local, size, remote, target.stag(), signal);
            }
            default -> conn.postSend(main, src, local, size, signal);
        }
    }

    /** The slot a main request's offsets depend on (verify and Sends), else 0: what its wrId carries. */
    private long wrSlot(long it) {
        return s.verify() || s.op() == Bench.Op.send ? it % slots : 0;
    }

    @Override
    public void completed(long wrId, boolean receive, boolean success, int byteLength, Enum<?> status) {
        int kind = kindOf(wrId);
        long it = slotOf(wrId);
        if (!success) {
            String what = kind == KIND_HELLO ? "the bench hello" : receive ? "a receive"
                    : s.op() == Bench.Op.send ? "a Send"
                    : (s.op() == Bench.Op.write) == (kind == KIND_MAIN) || kind == KIND_SETUP ? "an RDMA Write"
                    : "an RDMA Read";
            String cause = conn != null ? conn.endCause() : null; // why it was flushed
            fail(new IOException(what + " failed: " + status + (cause != null ? " (" + cause + ")" : "")));
            return;
        }
        if (kind == KIND_HELLO) {
            if (receive) {
                ByteBuf got = memory.helloMemory();
                int answer = BenchHello.isAnswer(got, BenchHello.LENGTH, byteLength)
                        ? BenchHello.depth(got, BenchHello.LENGTH) : 1; // echoed: serve --echo, depth 1
                if (answer < 1) {
                    helloAnswer.completeExceptionally(new IOException("the server posts no receives for Sends of "
                            + s.size() + " octets"));
                } else {
                    helloAnswer.complete(answer);
                }
            }
            return;
        }
        completions.add(1); // the event loop is the only writer
        long from = 0; // a main completion: the first iteration it completes (with the unsignaled ones before it)
        if (!receive && (kind == KIND_MAIN || kind == KIND_CHECK)) {
            from = mainsDone;
            it = kind == KIND_MAIN ? signaled.poll() : checksDone++;
            if (it < 0 || slotOf(wrId) != (kind == KIND_MAIN ? wrSlot(it) : it % slots)) { // what posting order says
                fail(new IOException("the completion of iteration " + it + " carries slot " + slotOf(wrId)
                        + ": completions left posting order"));
                return;
            }
            if (kind == KIND_MAIN) {
                mainsDone = it + 1;
            }
        }
        if (s.op() == Bench.Op.send) {
            if (receive) {
                onEcho((int) it, byteLength);
            } else {
                sendsDone = mainsDone;
                fill(0);
            }
        } else if (kind == KIND_CHECK) {
            if (check(it, (int) (it % slots) * s.size())) {
                finishIterations(it, it);
            }
        } else if (kind == KIND_MAIN && !(s.verify() && s.op() == Bench.Op.write)) {
            if (!s.verify() || check(it, (int) (it % slots) * s.size())) {
                finishIterations(from, it);
            }
        }
    }

    private void onEcho(int slot, int byteLength) {
        long it = echoes++;
        if (byteLength != s.size()) {
            fail(new IOException("echo of " + byteLength + " octets for a Send of " + s.size()));
            return;
        }
        if (s.verify() && !check(it, slot * s.size())) {
            return;
        }
        conn.postRecv(wr(slot, KIND_RECV), memory.sink, slot * s.size(), s.size());
        finishIterations(it, it);
    }

    private boolean check(long it, int local) {
        String bad = memory.mismatch(local, it);
        if (bad != null) {
            fail(new IOException(bad));
            return false;
        }
        verifiedOctets += s.size();
        return true;
    }

    /** Iterations {@code from} to {@code it} completed; {@code it}'s completion (or echo) is the one that came. */
    private void finishIterations(long from, long it) {
        long n = it - from + 1;
        done += n; // counted in or out of a phase: what is in flight is next - done
        completedIterations.add(n);
        if (phase == null) {
            return;
        }
        // the warm-up records too (the measured phase resets its loop's histogram when it begins): the measured path
        // is the one the warm-up ran and the JIT compiled. Only the iteration whose completion came has a latency.
        long now = System.nanoTime();
        BenchLatency.record(latency, now - postedAt[(int) it & (postedAt.length - 1)]);
        fill(now);
        maybeFinish();
    }

    private void maybeFinish() {
        CompletableFuture<Void> f = phase;
        if (f != null && (done - phaseStart == budget || stopPosting && done == next)) {
            finishedAt = System.nanoTime();
            phase = null;
            f.complete(null);
        }
    }

    private void fail(IOException e) {
        if (closing || failure != null) {
            return;
        }
        failure = e;
        helloAnswer.completeExceptionally(e);
        CompletableFuture<Void> f = phase;
        if (f != null) {
            phase = null;
            f.completeExceptionally(e);
        }
    }

    /** Closes the connection and releases the buffers (flushed work requests are then not failures). */
    void close() {
        closing = true;
        if (conn != null) {
            conn.channel().close().awaitUninterruptibly(s.timeoutMs());
        }
        memory.release();
    }
}
