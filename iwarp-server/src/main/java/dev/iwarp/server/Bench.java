package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The {@code bench} client, on any wire: RDMA Writes or Reads against the target region {@code serve}
 * advertises in its MPA Reply Private Data, VI/TCP ConnectAccept or (IFT) first Send ({@link Advertisement}), or Sends that
 * {@code serve} echoes. Connect with {@link #connect}, read {@link #parameters()} for a header, then {@link #run}:
 * a warm-up phase whose figures are dropped, then the measured phase; both are driven from completion callbacks
 * ({@link BenchConnection}).
 */
final class Bench implements AutoCloseable {
    enum Op { write, read, send }

    /**
     * What to run.
     *
     * @param iterations       measured iterations per connection (ignored when {@code durationNanos} is positive)
     * @param depth            iterations in flight per connection (reads: at most the ORD; Sends: at most what
     *                         serve grants, {@link BenchHello})
     * @param warmupIterations iterations per connection before measuring (or, when {@code warmupNanos} is
     *                         positive, as many as fit in that time); {@link #WARMUP_STABLE}: until the rate
     *                         is stable ({@link WarmupWatch}), for at most {@code warmupNanos}
     * @param verify           check every octet ({@link BenchPattern}): Writes read back, Reads of data written
     *                         first, echoes compared
     * @param corruptIteration test hook: connection 0 flips one octet of this iteration's data after writing the
     *                         pattern, so verify must fail (-1: off)
     */
    record Settings(Op op, int size, long iterations, long durationNanos, int depth, boolean crc, int connections,
                    long warmupIterations, long warmupNanos, boolean verify, long timeoutMs, long corruptIteration) {
        /** {@code warmupIterations} of a warm-up that runs until the rate is stable. */
        static final long WARMUP_STABLE = -1;

        boolean warmupUntilStable() {
            return warmupIterations == WARMUP_STABLE;
        }

        static Settings of(Op op, int size, long iterations, int depth) {
            return new Settings(op, size, iterations, 0, depth, false, 1, 0, 0, false, 10_000, -1);
        }

        Settings withConnections(int n) {
            return new Settings(op, size, iterations, durationNanos, depth, crc, n, warmupIterations, warmupNanos,
                    verify, timeoutMs, corruptIteration);
        }

        Settings withVerify(boolean v, long corrupt) {
            return new Settings(op, size, iterations, durationNanos, depth, crc, connections, warmupIterations,
                    warmupNanos, v, timeoutMs, corrupt);
        }

        Settings withWarmup(long its, long nanos) {
            return new Settings(op, size, iterations, durationNanos, depth, crc, connections, its, nanos, verify,
                    timeoutMs, corruptIteration);
        }

        Settings withDuration(long nanos) {
            return new Settings(op, size, iterations, nanos, depth, crc, connections, warmupIterations, warmupNanos,
                    verify, timeoutMs, corruptIteration);
        }

        Settings withCrc(boolean c, long timeout) {
            return new Settings(op, size, iterations, durationNanos, depth, c, connections, warmupIterations,
                    warmupNanos, verify, timeout, corruptIteration);
        }
    }

    /**
     * What the measured phase did, all connections together; latencies in nanoseconds from posting to completion
     * (Sends: to the echo).
     *
     * @param summary        the negotiated wire parameters in one phrase ("MPA Rev 2 CRC on", "VI/TCP ... CRC off")
     * @param parameters     the negotiation line ("MPA Rev 2, CRC off, IRD 1 ORD 16, MULPDU 32762")
     * @param readDepth      RDMA Reads allowed outstanding (MPA ORD; VI RDMA Read Window)
     * @param cpuNanos       CPU time of the client's event loop threads (-1: not measurable)
     * @param allocatedBytes heap allocated by those threads (-1: not measurable)
     * @param peakBytesPerSecond best {@link Meter#INTERVAL_MS} interval (0: run shorter than one)
     * @param verifyOn       whether octets were checked ({@code verifiedOctets} means nothing otherwise)
     * @param parametersAtStart the negotiation line when connected (the header's): MPA's MULPDU may have grown
     *                       since, following the EMSS, by the end of the run ({@code parameters})
     * @param warmupNanos    how long the warm-up ran
     * @param warmupStable   {@code --warmup stable}: whether the rate was stable when it ended (null: other warm-up)
     * @param warmupRates    {@code --warmup stable}: the MB/s of each warm-up window (empty otherwise)
     * @param process        this process's CPU and allocation over the measured phase (all threads)
     * @param server         serve's process's over the measured phase ({@link BenchCost}; unknown: -1)
     */
    record Result(Op op, int size, int depth, long iterations, long bytes, long nanos, Histogram latency,
                  String summary, boolean crc, int readDepth, String parameters, int connections, long warmup,
                  long cpuNanos, long allocatedBytes, long verifiedOctets, double peakBytesPerSecond,
                  boolean verifyOn, String parametersAtStart, long warmupNanos, Boolean warmupStable,
                  List<Double> warmupRates, BenchCost.Snapshot process, BenchCost.Snapshot server) {
        double gbitPerSecond() {
            return bytes * 8.0 / nanos;
        }

        /** perftest's MB: 2^20 octets. */
        double mbPerSecond() {
            return bytes * 1e9 / nanos / (1 << 20);
        }

        /** The best interval's rate; the average when higher (a run of few intervals is itself one). */
        double peakMbPerSecond() {
            return Math.max(peakBytesPerSecond / (1 << 20), mbPerSecond());
        }

        double messagesPerSecond() {
            return iterations * 1e9 / nanos;
        }

        double cpuMicrosPerMessage() {
            return cpuNanos < 0 || iterations == 0 ? Double.NaN : cpuNanos / 1e3 / iterations;
        }

        double allocatedPerMessage() {
            return allocatedBytes < 0 || iterations == 0 ? Double.NaN : (double) allocatedBytes / iterations;
        }

        /** A counter per measured message (µs for CPU nanoseconds when {@code micros}); NaN when unknown. */
        double perMessage(long counter, boolean micros) {
            return counter < 0 || iterations == 0 ? Double.NaN : counter / (micros ? 1e3 : 1.0) / iterations;
        }
    }

    /** Connections set up at once (each blocks a thread until established). */
    private static final int PARALLEL_CONNECTS = 8;

    private final Settings s;
    private final List<BenchConnection> connections;
    private final LongAdder progress;
    private final long[] threads;
    /** The negotiation line when connected (MPA's MULPDU may grow later with the EMSS). */
    private String startParameters;
    /** Set by {@link #interrupt} (SIGINT): the running phase stops posting and ends with what completed. */
    private volatile boolean interrupted;

    private Bench(Settings s, List<BenchConnection> connections, LongAdder progress, long[] threads) {
        this.s = s;
        this.connections = connections;
        this.progress = progress;
        this.threads = threads;
    }

    /** Opens {@code s.connections()} connections and plans where each one's iterations go. */
    static Bench connect(ClientWire wire, InetSocketAddress server, Settings s) throws IOException {
        if (s.op() == Op.send && s.size() == Advertisement.LENGTH) {
            throw new IllegalArgumentException("a 16-octet Send is an rping advertisement to serve; use another size");
        }
        if (s.size() < 1 || (s.op() == Op.send && s.size() > RpingSession.BUFFER_SIZE)) {
            throw new IllegalArgumentException("size out of range: " + s.size());
        }
        List<BenchConnection> open = new ArrayList<>();
        Bench b = new Bench(s, open, new LongAdder(), new long[0]);
        try {
            LongAdder progress = b.progress;
            openAll(wire, server, s, progress, open);
            // connections given the same region share it: with verify each gets its own part
            Map<String, List<BenchConnection>> regions = new LinkedHashMap<>();
            for (BenchConnection c : open) {
                String key = s.op() == Op.send ? "" : Advertisement.decode(c.connection().peerData()).toString();
                regions.computeIfAbsent(key, k -> new ArrayList<>()).add(c);
            }
            for (List<BenchConnection> group : regions.values()) {
                long size = s.op() == Op.send ? 0 : Advertisement.decode(group.get(0).connection().peerData())
                        .sizeUnsigned();
                long share = s.verify() ? size / group.size() : size;
                for (int k = 0; k < group.size(); k++) {
                    group.get(k).plan(s.verify() ? k * share : 0, share);
                }
            }
            Set<Long> ids = new LinkedHashSet<>();
            for (BenchConnection c : open) {
                ids.add(c.connection().channel().eventLoop().submit(() -> Thread.currentThread().getId()).get());
            }
            return new Bench(s, open, progress, ids.stream().mapToLong(Long::longValue).toArray());
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

    /** Opens the connections, up to {@link #PARALLEL_CONNECTS} at a time; on a failure the rest are closed too. */
    private static void openAll(ClientWire wire, InetSocketAddress server, Settings s, LongAdder progress,
                                List<BenchConnection> open) throws IOException, InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(s.connections(), PARALLEL_CONNECTS), r -> {
            Thread t = new Thread(r, "bench-connect");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<BenchConnection>> pending = new ArrayList<>();
            for (int i = 0; i < s.connections(); i++) {
                int index = i;
                pending.add(pool.submit(() -> BenchConnection.open(wire, server, index, s, progress)));
            }
            IOException first = null;
            for (Future<BenchConnection> f : pending) {
                try {
                    open.add(f.get());
                } catch (ExecutionException e) {
                    if (first == null) {
                        first = e.getCause() instanceof IOException io ? io : new IOException(e.getCause().getMessage(),
                                e.getCause());
                    }
                }
            }
            if (first != null) {
                throw first;
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** The negotiation line of the first connection, e.g. "MPA Rev 2, CRC off, IRD 1 ORD 16, MULPDU 32762". */
    String parameters() {
        return connections.get(0).connection().parameters();
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

    /** Iterations in flight per connection, as granted (the least over the connections). */
    int depth() {
        return connections.stream().mapToInt(BenchConnection::depth).min().orElse(0);
    }

    /** Runs the warm-up, then the measured phase; progress once a second to {@code progressOut} (null: none). */
    Result run(PrintWriter progressOut) throws IOException {
        return run(progressOut, null);
    }

    /**
     * As {@link #run(PrintWriter)}; {@code serverCost} (null: none) asks the server for its process's counters
     * right before and right after the measured phase ({@link BenchCost#ask}).
     */
    Result run(PrintWriter progressOut, java.util.function.Supplier<BenchCost.Snapshot> serverCost)
            throws IOException {
        try {
            if (startParameters == null) {
                startParameters = parameters(); // what the header showed
            }
            long warmupStart = System.nanoTime();
            WarmupWatch watch = null;
            if (s.warmupUntilStable()) {
                watch = new WarmupWatch(() -> connections.stream().mapToLong(c -> c.warmupDone).sum(), s.size(),
                        progressOut, warmupStart);
                phase(Long.MAX_VALUE, false, s.warmupNanos(), watch::stableAt);
            } else if (s.warmupNanos() > 0) {
                phase(Long.MAX_VALUE, false, s.warmupNanos());
            } else if (s.warmupIterations() > 0) {
                phase(s.warmupIterations(), false, 0);
            }
            long warmupTaken = System.nanoTime() - warmupStart;
            BenchCost.Snapshot server0 = serverCost == null ? BenchCost.Snapshot.UNKNOWN : serverCost.get();
            BenchCost.Snapshot process0 = BenchCost.Snapshot.ofThisProcess();
            long cpu0 = cpuNanos();
            long alloc0 = allocatedBytes();
            Meter meter = new Meter(progress, progressOut, s.size());
            long start = System.nanoTime();
            try {
                phase(s.durationNanos() > 0 ? Long.MAX_VALUE : s.iterations(), true, s.durationNanos());
            } finally {
                meter.stop();
            }
            long end = connections.stream().mapToLong(c -> c.finishedAt).max().orElse(start);
            long cpu1 = cpuNanos();
            long alloc1 = allocatedBytes();
            BenchCost.Snapshot process = process0.until(BenchCost.Snapshot.ofThisProcess());
            BenchCost.Snapshot server = serverCost == null || server0.cpuNanos() < 0 ? BenchCost.Snapshot.UNKNOWN
                    : server0.until(serverCost.get());
            Histogram all = new Histogram(3);
            long verified = 0;
            for (BenchConnection c : connections) {
                all.add(c.latency);
                verified += c.verifiedOctets;
            }
            long its = all.getTotalCount();
            BenchConnection first = connections.get(0);
            return new Result(s.op(), s.size(), depth(), its, its * s.size(), Math.max(1, end - start), all,
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

    private void phase(long iterations, boolean record, long nanos) throws IOException, InterruptedException {
        phase(iterations, record, nanos, now -> false);
    }

    /** As above; a timed phase also ends once {@code enough} says so (tested every few milliseconds). */
    private void phase(long iterations, boolean record, long nanos, java.util.function.LongPredicate enough)
            throws IOException, InterruptedException {
        List<CompletableFuture<Void>> phases = new ArrayList<>();
        for (BenchConnection c : connections) {
            phases.add(c.startPhase(iterations, record));
        }
        long deadline = nanos > 0 ? System.nanoTime() + nanos : Long.MAX_VALUE;
        boolean stopped = false;
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
                    long idle = System.nanoTime() - connections.get(i).lastCompletionAt;
                    if (idle > TimeUnit.MILLISECONDS.toNanos(s.timeoutMs())) {
                        throw new IOException("no completion on connection " + i + " within " + s.timeoutMs() + " ms");
                    }
                }
            }
            if (all) {
                return;
            }
            long now = System.nanoTime();
            if (!stopped && (interrupted || now >= deadline || enough.test(now))) {
                stopped = true;
                connections.forEach(BenchConnection::stop);
            }
            Thread.sleep(5); // the figures come from the connections' own clocks, not from this wake-up
        }
    }

    private long cpuNanos() {
        ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        if (!bean.isThreadCpuTimeSupported()) {
            return -1;
        }
        long sum = 0;
        for (long id : threads) {
            sum += Math.max(0, bean.getThreadCpuTime(id));
        }
        return sum;
    }

    private long allocatedBytes() {
        if (!(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean bean)
                || !bean.isThreadAllocatedMemorySupported() || !bean.isThreadAllocatedMemoryEnabled()) {
            return -1;
        }
        long sum = 0;
        for (long id : threads) {
            sum += Math.max(0, bean.getThreadAllocatedBytes(id));
        }
        return sum;
    }

    @Override
    public void close() {
        for (BenchConnection c : connections) {
            c.close();
        }
    }

    /** Connect, run and close; no progress output. */
    static Result run(ClientWire wire, InetSocketAddress server, Settings s) throws IOException {
        try (Bench b = connect(wire, server, s)) {
            return b.run(null);
        }
    }

    /** iWARP on {@code stack}, one connection, no warm-up. */
    static Result run(IwarpStack stack, InetSocketAddress server, Op op, int size, long iterations, long durationNanos,
                      int depth, boolean crc, long timeoutMs) throws IOException {
        return run(IwarpWire.client(stack), server, op, size, iterations, durationNanos, depth, crc, timeoutMs,
                new AtomicLong());
    }

    /** One connection, no warm-up; adds the octets moved to {@code progress}. */
    static Result run(ClientWire wire, InetSocketAddress server, Op op, int size, long iterations, long durationNanos,
                      int depth, boolean crc, long timeoutMs, AtomicLong progress) throws IOException {
        Result r = run(wire, server, Settings.of(op, size, iterations, depth).withDuration(durationNanos)
                .withCrc(crc, timeoutMs));
        progress.addAndGet(r.bytes());
        return r;
    }
}
