package dev.iwarp.server;

/**
 * What one {@code bench} run does ({@link Bench}).
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
 * @param cqMod            a main work request posted signaled in this many (perftest's {@code --cq-mod}), and the
 *                         last of each burst; 1: every one ({@link SignaledIterations})
 */
record BenchSettings(Bench.Op op, int size, long iterations, long durationNanos, int depth, boolean crc,
                     int connections, long warmupIterations, long warmupNanos, boolean verify, long timeoutMs,
                     long corruptIteration, int cqMod) {
    /** {@code warmupIterations} of a warm-up that runs until the rate is stable. */
    static final long WARMUP_STABLE = -1;

    boolean warmupUntilStable() {
        return warmupIterations == WARMUP_STABLE;
    }

    static BenchSettings of(Bench.Op op, int size, long iterations, int depth) {
        return new BenchSettings(op, size, iterations, 0, depth, false, 1, 0, 0, false, 10_000, -1, 1);
    }

    BenchSettings withConnections(int n) {
        return new BenchSettings(op, size, iterations, durationNanos, depth, crc, n, warmupIterations, warmupNanos,
                verify, timeoutMs, corruptIteration, cqMod);
    }

    BenchSettings withVerify(boolean v, long corrupt) {
        return new BenchSettings(op, size, iterations, durationNanos, depth, crc, connections, warmupIterations,
                warmupNanos, v, timeoutMs, corrupt, cqMod);
    }

    BenchSettings withWarmup(long its, long nanos) {
        return new BenchSettings(op, size, iterations, durationNanos, depth, crc, connections, its, nanos, verify,
                timeoutMs, corruptIteration, cqMod);
    }

    BenchSettings withDuration(long nanos) {
        return new BenchSettings(op, size, iterations, nanos, depth, crc, connections, warmupIterations, warmupNanos,
                verify, timeoutMs, corruptIteration, cqMod);
    }

    BenchSettings withCqMod(int n) {
        return new BenchSettings(op, size, iterations, durationNanos, depth, crc, connections, warmupIterations,
                warmupNanos, verify, timeoutMs, corruptIteration, n);
    }

    BenchSettings withCrc(boolean c, long timeout) {
        return new BenchSettings(op, size, iterations, durationNanos, depth, c, connections, warmupIterations,
                warmupNanos, verify, timeout, corruptIteration, cqMod);
    }
}
