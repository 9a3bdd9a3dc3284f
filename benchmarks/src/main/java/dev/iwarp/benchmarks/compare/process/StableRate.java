package dev.iwarp.benchmarks.compare.process;

import java.util.ArrayList;
import java.util.List;

/**
 * The raw client's {@code --warmup stable}, by the rule {@code bench --warmup stable} applies to our side, so that
 * both processes of a comparison leave their warm-up alike: rates over windows of {@link #WINDOW_MILLIS}, stable once
 * each of the last {@link #STEADY_WINDOWS} is within {@link #TOLERANCE} of the window before it (the JIT compiler
 * has done what moves the rate). A fixed warm-up measured a process still compiling: a bench process is about
 * 9 s in before C2 stops taking a core's worth of time on a 2-core machine.
 */
final class StableRate {
    static final long WINDOW_MILLIS = 500;
    static final double TOLERANCE = 0.10;
    static final int STEADY_WINDOWS = 2;

    private final List<Double> rates = new ArrayList<>();
    private boolean stable;

    /** One more window's rate (messages per second): whether the rate is now stable. */
    boolean add(double rate) {
        rates.add(rate);
        int n = rates.size();
        stable = n > STEADY_WINDOWS;
        for (int i = n - STEADY_WINDOWS; stable && i < n; i++) {
            double before = rates.get(i - 1);
            stable = before > 0 && Math.abs(rates.get(i) - before) <= TOLERANCE * before;
        }
        return stable;
    }

    boolean stable() {
        return stable;
    }

    int windows() {
        return rates.size();
    }
}
