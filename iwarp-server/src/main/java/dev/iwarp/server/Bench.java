package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.server.wire.WireConnection;
import io.netty.channel.EventLoop;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code bench} client, on any wire: RDMA Writes or Reads against the target region {@code serve}
 * advertises in its MPA Reply Private Data, VI/TCP ConnectAccept or (IFT) first Send ({@link Advertisement}), or Sends that
 * {@code serve} echoes. Connect with {@link #connect}, read {@link #parameters()} for a header, then {@link #run}:
 * a warm-up phase whose figures are dropped, then the measured phase; both are driven from completion callbacks
 * ({@link BenchConnection}).
 */
final class Bench implements AutoCloseable {
    enum Op { write, read, send }

    private final BenchSettings s;
    private final List<BenchConnection> connections;
    private final EventLoopThreadCost threads;
    private final BenchLatency latency;
    /** The negotiation line when connected (MPA's MULPDU may grow later with the EMSS). */
    private String startParameters;
    /** Set by {@link #interrupt} (SIGINT): the running phase stops posting and ends with what completed. */
    private volatile boolean interrupted;
    private volatile boolean interruptedInWarmup;

    private Bench(BenchSettings s, List<BenchConnection> connections, EventLoopThreadCost threads,
                  BenchLatency latency) {
        this.s = s;
        this.connections = connections;
        this.threads = threads;
        this.latency = latency;
    }

    /** Opens {@code s.connections()} connections and plans where each one's iterations go. */
    static Bench connect(ClientWire wire, InetSocketAddress server, BenchSettings s) throws IOException {
        if (s.op() == Op.send && s.size() == Advertisement.LENGTH) {
            throw new IllegalArgumentException("a 16-octet Send is an rping advertisement to serve; use another size");
        }
        if (s.size() < 1 || (s.op() == Op.send && s.size() > RpingSession.BUFFER_SIZE)) {
            throw new IllegalArgumentException("size out of range: " + s.size());
        }
        List<BenchConnection> open = new ArrayList<>();
        Bench b = new Bench(s, open, EventLoopThreadCost.NONE, null);
        try {
            BenchOpening.openAll(wire, server, s, open);
            BenchOpening.plan(s, open);
            return new Bench(s, open, EventLoopThreadCost.of(open), BenchLatency.assign(open));
        } catch (IOException | RuntimeException e) {
            b.close();
            throw e;
        } catch (ExecutionException e) {
            b.close();
            throw new IOException(e.getCause());
        } catch (InterruptedException e) {
            b.close();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /** The negotiation line of the first connection, e.g. "MPA Rev 2, CRC off, IRD 1 ORD 16, MULPDU 32762". */
    String parameters() {
        return connections.get(0).connection().parameters();
    }

    /** Connection {@code i}'s wire connection. */
    WireConnection connection(int i) {
        return connections.get(i).connection();
    }

    String summary() {
        return connections.get(0).connection().summary();
    }

    /**
     * Ends the run early, as a timed phase ends (from any thread; SIGINT): what is in flight completes and
     * {@link #run} returns the figures measured so far. {@link #wasInterrupted} then says they are partial.
     */
    void interrupt() {
        interrupted = true;
    }

    boolean wasInterrupted() {
        return interrupted;
    }

    /** Whether {@link #interrupt} came during the warm-up: then nothing was measured. */
    boolean wasInterruptedInWarmup() {
        return interruptedInWarmup;
    }

    /** Main requests per signaled one ({@code --cq-mod} as the connections apply it; the least over them). */
    int signalEvery() {
        return connections.stream().mapToInt(BenchConnection::signalEvery).min().orElse(1);
    }

    /** Iterations in flight per connection, as granted (the least over the connections). */
    int depth() {
        return connections.stream().mapToInt(BenchConnection::depth).min().orElse(0);
    }

    /** Runs the warm-up, then the measured phase; progress once a second to {@code progressOut} (null: none). */
    BenchResult run(PrintWriter progressOut) throws IOException {
        return run(progressOut, null);
    }

    /**
     * As {@link #run(PrintWriter)}; {@code serverCost} (null: none) asks the server for its process's counters
     * right before and right after the measured phase ({@link BenchCost#ask}).
     */
    BenchResult run(PrintWriter progressOut, java.util.function.Supplier<BenchCost.Snapshot> serverCost)
            throws IOException {
        try {
            if (startParameters == null) {
                startParameters = parameters(); // what the header showed
            }
            long warmupStart = System.nanoTime();
            WarmupWatch watch = null;
            // a timed warm-up hands what it has in flight over to the measured phase (no drain between them); one of
            // a count ends when its iterations completed, so that exactly that many were not measured
            if (s.warmupUntilStable()) {
                watch = new WarmupWatch(() -> connections.stream().mapToLong(BenchConnection::completedIterations).sum(),
                        s.size(), progressOut, warmupStart);
                await(start(Long.MAX_VALUE, false), s.warmupNanos(), watch::stableAt, true);
            } else if (s.warmupNanos() > 0) {
                await(start(Long.MAX_VALUE, false), s.warmupNanos(), now -> false, true);
            } else if (s.warmupIterations() > 0) {
                await(start(s.warmupIterations(), false), 0, now -> false, false);
            }
            long warmupTaken = System.nanoTime() - warmupStart;
            interruptedInWarmup = interrupted;
            BenchCost.Snapshot server0 = serverCost == null ? BenchCost.Snapshot.UNKNOWN : serverCost.get();
            BenchCost.Snapshot process0 = BenchCost.Snapshot.ofThisProcess();
            long cpu0 = threads.cpuNanos();
            long alloc0 = threads.allocatedBytes();
            Meter meter = new Meter(() -> connections.stream().mapToLong(BenchConnection::measuredOctets).sum(),
                    progressOut, s.size());
            long start = System.nanoTime();
            try {
                if (!interruptedInWarmup) { // Ctrl-C in the warm-up: no measured phase
                    await(start(s.durationNanos() > 0 ? Long.MAX_VALUE : s.iterations(), true), s.durationNanos(),
                            now -> false, false);
                    // from when the first loop began measuring (the loops begin within microseconds of each other)
                    start = connections.stream().mapToLong(c -> c.measuredSince).min().orElse(start);
                }
            } finally {
                meter.stop();
            }
            long end = connections.stream().mapToLong(c -> c.finishedAt).max().orElse(start);
            long cpu1 = threads.cpuNanos();
            long alloc1 = threads.allocatedBytes();
            BenchCost.Snapshot process = process0.until(BenchCost.Snapshot.ofThisProcess());
            BenchCost.Snapshot server = serverCost == null || server0.cpuNanos() < 0 ? BenchCost.Snapshot.UNKNOWN
                    : server0.until(serverCost.get());
            // interrupted in the warm-up: the histograms hold the warm-up's latencies (reset when measuring starts)
            Histogram all = interruptedInWarmup ? BenchLatency.histogram() : latency.merged();
            long verified = 0;
            for (BenchConnection c : connections) {
                verified += c.verifiedOctets;
            }
            // not the histogram's count: with --cq-mod only the signaled iterations have a latency
            long its = connections.stream().mapToLong(BenchConnection::measuredOctets).sum() / s.size();
            BenchConnection first = connections.get(0);
            return new BenchResult(s.op(), s.size(), depth(), its, its * s.size(), Math.max(1, end - start), all,
                    first.connection().summary(), first.connection().crc(), first.connection().readDepth(),
                    parameters(), connections.size(), s.warmupIterations(), cpu0 < 0 ? -1 : cpu1 - cpu0,
                    alloc0 < 0 ? -1 : alloc1 - alloc0, verified, meter.peakBytesPerSecond(), s.verify(), startParameters,
                    warmupTaken, watch == null ? null : watch.stable(), watch == null ? List.of() : watch.mbPerSecond(),
                    process, server);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /**
     * Begins a phase of {@code iterations} per connection (or until stopped) on every connection, from its event
     * loop, one task per loop: a measured phase first resets the loop's latency histogram, which only that loop
     * records into, so that the histogram holds exactly what its connections complete from then on.
     */
    private List<CompletableFuture<Void>> start(long iterations, boolean measured)
            throws IOException, InterruptedException {
        Map<EventLoop, List<Runnable>> byLoop = new LinkedHashMap<>();
        List<CompletableFuture<Void>> phases = new ArrayList<>();
        for (BenchConnection c : connections) {
            CompletableFuture<Void> f = new CompletableFuture<>();
            phases.add(f);
            byLoop.computeIfAbsent(c.connection().channel().eventLoop(), l -> new ArrayList<>())
                    .add(() -> c.begin(f, iterations, measured));
        }
        List<CompletableFuture<Void>> begun = new ArrayList<>();
        byLoop.forEach((loop, begins) -> {
            CompletableFuture<Void> done = new CompletableFuture<>();
            begun.add(done);
            loop.execute(() -> {
                if (measured) {
                    latency.reset(loop);
                }
                begins.forEach(Runnable::run);
                done.complete(null);
            });
        });
        // a phase's clock starts once every loop began it: a loop busy with many connections runs the task late,
        // and a stop that reached a connection before its begin would end the phase before it had started there
        try {
            CompletableFuture.allOf(begun.toArray(CompletableFuture[]::new)).get(s.timeoutMs(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IOException("the event loops did not begin the phase within " + s.timeoutMs() + " ms", e);
        }
        return phases;
    }

    /**
     * Waits for a phase: until each connection's future ends it (its iterations done) or, timed, until {@code nanos}
     * passed or {@code enough} says so (tested every few milliseconds); then stops it and waits for what is in
     * flight, unless {@code handOver} (the warm-up: the measured phase takes over what is in flight; stopped only
     * when interrupted). A connection that completes nothing for {@code --timeout} fails it.
     */
    private void await(List<CompletableFuture<Void>> phases, long nanos, java.util.function.LongPredicate enough,
                       boolean handOver) throws IOException, InterruptedException {
        long deadline = nanos > 0 ? System.nanoTime() + nanos : Long.MAX_VALUE;
        boolean stopped = false;
        long[] completions = new long[connections.size()]; // each connection's count when it last moved, and when
        long[] movedAt = new long[connections.size()];
        for (int i = 0; i < completions.length; i++) {
            completions[i] = connections.get(i).completions();
            movedAt[i] = System.nanoTime();
        }
        while (true) {
            boolean all = true;
            for (int i = 0; i < phases.size(); i++) {
                CompletableFuture<Void> f = phases.get(i);
                if (f.isCompletedExceptionally()) {
                    try {
                        f.get();
                    } catch (ExecutionException e) {
                        throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
                    }
                }
                if (!f.isDone()) {
                    all = false;
                    long count = connections.get(i).completions();
                    long at = System.nanoTime();
                    if (count != completions[i]) {
                        completions[i] = count;
                        movedAt[i] = at;
                    } else if (at - movedAt[i] > TimeUnit.MILLISECONDS.toNanos(s.timeoutMs())) {
                        throw new IOException("no completion on connection " + i + " within " + s.timeoutMs() + " ms");
                    }
                }
            }
            if (all) {
                return;
            }
            long now = System.nanoTime();
            if (handOver && !interrupted && (now >= deadline || enough.test(now))) {
                return;
            }
            if (!stopped && (interrupted || now >= deadline || enough.test(now))) {
                stopped = true;
                connections.forEach(BenchConnection::stop);
            }
            Thread.sleep(5); // the figures come from the connections' own clocks, not from this wake-up
        }
    }

    /** Its connections (tests look at each one's figures). */
    List<BenchConnection> connections() {
        return connections;
    }

    @Override
    public void close() {
        for (BenchConnection c : connections) {
            c.close();
        }
    }

    /** Connect, run and close; no progress output. */
    static BenchResult run(ClientWire wire, InetSocketAddress server, BenchSettings s) throws IOException {
        try (Bench b = connect(wire, server, s)) {
            return b.run(null);
        }
    }

    /** iWARP on {@code stack}, one connection, no warm-up. */
    static BenchResult run(IwarpStack stack, InetSocketAddress server, Op op, int size, long iterations, long durationNanos,
                      int depth, boolean crc, long timeoutMs) throws IOException {
        return run(IwarpWire.client(stack), server, op, size, iterations, durationNanos, depth, crc, timeoutMs,
                new AtomicLong());
    }

    /** One connection, no warm-up; adds the octets moved to {@code progress}. */
    static BenchResult run(ClientWire wire, InetSocketAddress server, Op op, int size, long iterations, long durationNanos,
                      int depth, boolean crc, long timeoutMs, AtomicLong progress) throws IOException {
        BenchResult r = run(wire, server, BenchSettings.of(op, size, iterations, depth).withDuration(durationNanos)
                .withCrc(crc, timeoutMs));
        progress.addAndGet(r.bytes());
        return r;
    }
}
