package dev.iwarp.server;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * {@code bench --warmup stable}: the warm-up runs in windows of {@link #WINDOW_NANOS} until the rate holds, that is
 * until each of the last {@link #STEADY_WINDOWS} windows is within {@link #TOLERANCE} of the one before it, and the
 * JIT compiler is quiet (it compiled for at most {@link #JIT_QUIET} of the last window's time), or until the time
 * allowed ran out. The rate alone was not enough: on a 2-core machine a bench process's rate held within 10 % from
 * 6 s on while its C2 threads still took half of its CPU samples 8-12 s in, and a core the event loops lacked.
 * What it saw is kept for the report.
 */
final class WarmupWatch {
    static final long WINDOW_NANOS = 500_000_000L;
    static final double TOLERANCE = 0.10;
    static final int STEADY_WINDOWS = 2;
    /** The JIT compiler's share of the last window's time (one thread) below which it counts as quiet. */
    static final double JIT_QUIET = 0.05;

    /** This JVM's total JIT compilation time in ms, or null where the JVM does not measure it. */
    static LongSupplier jvmCompileMillis() {
        java.lang.management.CompilationMXBean c = java.lang.management.ManagementFactory.getCompilationMXBean();
        return c != null && c.isCompilationTimeMonitoringSupported() ? c::getTotalCompilationTime : null;
    }

    private final LongSupplier completed;
    private final LongSupplier compileMillis;
    private long windowCompileMillis;
    private final int messageSize;
    private final PrintWriter progress;
    private final long startedAt;
    private final List<Double> windowRates = new ArrayList<>(); // messages per second
    private long windowStart;
    private long windowCount;
    private boolean stable;

    WarmupWatch(LongSupplier completed, int messageSize, PrintWriter progress, long now) {
        this(completed, jvmCompileMillis(), messageSize, progress, now);
    }

    /** {@code compileMillis}: total JIT compilation time in ms so far (null: not known, the rate alone decides). */
    WarmupWatch(LongSupplier completed, LongSupplier compileMillis, int messageSize, PrintWriter progress, long now) {
        this.completed = completed;
        this.compileMillis = compileMillis;
        this.windowCompileMillis = compileMillis == null ? 0 : compileMillis.getAsLong();
        this.messageSize = messageSize;
        this.progress = progress;
        this.startedAt = now;
        this.windowStart = now;
        this.windowCount = completed.getAsLong();
    }

    /** Called often (every few ms) during the warm-up: true once the rate is stable. */
    boolean stableAt(long now) {
        if (now - windowStart < WINDOW_NANOS) {
            return stable;
        }
        long c = completed.getAsLong();
        windowRates.add((c - windowCount) * 1e9 / (now - windowStart));
        boolean jitQuiet = true;
        if (compileMillis != null) {
            long m = compileMillis.getAsLong();
            jitQuiet = (m - windowCompileMillis) * 1e6 <= JIT_QUIET * (now - windowStart);
            windowCompileMillis = m;
        }
        windowStart = now;
        windowCount = c;
        if (progress != null && windowRates.size() % 2 == 0) {
            progress.printf(Locale.ROOT, "bench: warm-up %3.0f s  %10.2f MB/sec%n", (now - startedAt) / 1e9,
                    windowRates.get(windowRates.size() - 1) * messageSize / (1 << 20));
            progress.flush();
        }
        stable = isStable(windowRates) && jitQuiet;
        return stable;
    }

    /** Each of the last {@link #STEADY_WINDOWS} rates within {@link #TOLERANCE} of the rate before it. */
    static boolean isStable(List<Double> rates) {
        int n = rates.size();
        if (n < STEADY_WINDOWS + 1) {
            return false;
        }
        for (int i = n - STEADY_WINDOWS; i < n; i++) {
            double before = rates.get(i - 1);
            if (before <= 0 || Math.abs(rates.get(i) - before) > TOLERANCE * before) {
                return false;
            }
        }
        return true;
    }

    boolean stable() {
        return stable;
    }

    /** The window rates in MB/s (2^20 octets), oldest first. */
    List<Double> mbPerSecond() {
        return windowRates.stream().map(r -> r * messageSize / (1 << 20)).toList();
    }
}
