package dev.iwarp.server;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code bench --warmup stable}: when a rate counts as stable, on a clock the test drives. */
class WarmupWatchTest {
    @Test
    void aRateStillClimbingIsNotStable() {
        // a JIT warm-up as seen on a 2-core machine: 388 -> 605 -> 1030 MB/s in the first windows
        assertFalse(WarmupWatch.isStable(List.of(388.0, 605.0, 1030.0)));
        assertFalse(WarmupWatch.isStable(List.of(1000.0, 1050.0))); // too few windows to tell
        assertFalse(WarmupWatch.isStable(List.of(1000.0, 1050.0, 1200.0)));
        assertFalse(WarmupWatch.isStable(List.of(0.0, 0.0, 0.0))); // nothing completes: not a rate
    }

    @Test
    void threeWindowsWithinTenPercentAreStable() {
        assertTrue(WarmupWatch.isStable(List.of(1000.0, 1050.0, 1040.0)));
        assertTrue(WarmupWatch.isStable(List.of(388.0, 605.0, 1030.0, 1100.0, 1050.0)));
        assertTrue(WarmupWatch.isStable(List.of(1000.0, 910.0, 1000.0))); // -9 %, +9.9 %
    }

    @Test
    void windowsAreHalfASecondAndRatesAreReportedInMegabytes() {
        AtomicLong done = new AtomicLong();
        long t = 1_000_000_000L;
        WarmupWatch w = new WarmupWatch(done::get, null, 1 << 20, null, t);
        long[] perWindow = {100, 300, 600, 620, 610};
        boolean[] expected = {false, false, false, false, true};
        for (int i = 0; i < perWindow.length; i++) {
            done.addAndGet(perWindow[i]);
            assertFalse(w.stableAt(t + WarmupWatch.WINDOW_NANOS - 1) && i < 4, "no new window before 0.5 s");
            t += WarmupWatch.WINDOW_NANOS;
            assertEquals(expected[i], w.stableAt(t), "window " + i);
        }
        // 1 MiB messages: per 0.5 s window, MB/s is twice the count
        assertEquals(List.of(200.0, 600.0, 1200.0, 1240.0, 1220.0), w.mbPerSecond());
        assertTrue(w.stable());
    }

    /** A steady rate while the JIT compiler still works is not the end of the warm-up; once it is quiet, it is. */
    @Test
    void aSteadyRateWhileTheJitCompilesIsNotStable() {
        AtomicLong done = new AtomicLong();
        AtomicLong compiled = new AtomicLong();
        long t = 1_000_000_000L;
        WarmupWatch w = new WarmupWatch(done::get, compiled::get, 1 << 20, null, t);
        long[] compileMs = {400, 300, 200, 100, 26, 25, 0};
        boolean[] expected = {false, false, false, false, false, true, true};
        for (int i = 0; i < compileMs.length; i++) {
            done.addAndGet(600);
            compiled.addAndGet(compileMs[i]);
            t += WarmupWatch.WINDOW_NANOS;
            assertEquals(expected[i], w.stableAt(t), "window " + i + " (" + compileMs[i] + " ms compiling of 500)");
        }
    }
}
