package dev.iwarp.benchmarks.compare.process;

import java.util.ArrayList;
import java.util.List;

/**
 * The raw client's {@code --warmup stable}, by the rule {@code bench --warmup stable} applies to our side, so that
 * both processes of a comparison leave their warm-up alike: rates over windows of {@link #WINDOW_MILLIS}, stable once
 * each of the last {@link #STEADY_WINDOWS} is within {@link #TOLERANCE} of the window before it and the JIT compiler
 * compiled for at most {@link #JIT_QUIET} of the last window. A fixed warm-up measured a process still compiling: a
 * bench process is about 10 s in before C2 stops taking a large share of its CPU on a 2-core machine.
 */
final class StableRate {
    static final long WINDOW_MILLIS = 500;
    static final double TOLERANCE = 0.10;
    static final int STEADY_WINDOWS = 2;
    static final double JIT_QUIET = 0.05;

    private final java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
    private long compiledMillis = jitMillis();

    private final List<Double> rates = new ArrayList<>();
    private boolean stable;

    private long jitMillis() {
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
    }

    /** One more window's rate (messages per second), over {@code windowNanos}: whether the rate is now stable. */
    boolean add(double rate, long windowNanos) {
        rates.add(rate);
        long m = jitMillis();
        boolean jitQuiet = (m - compiledMillis) * 1e6 <= JIT_QUIET * windowNanos;
        compiledMillis = m;
        int n = rates.size();
        stable = n > STEADY_WINDOWS;
        for (int i = n - STEADY_WINDOWS; stable && i < n; i++) {
            double before = rates.get(i - 1);
            stable = before > 0 && Math.abs(rates.get(i) - before) <= TOLERANCE * before;
        }
        stable &= jitQuiet;
        return stable;
    }

    boolean stable() {
        return stable;
    }

    int windows() {
        return rates.size();
    }
}
