package dev.iwarp.server;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BenchLatencyTest {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    @Test
    void aLatencyFarAboveTheOnesBeforeAllocatesNothing() {
        Histogram h = BenchLatency.histogram();
        for (int i = 0; i < 10_000; i++) { // a warm-up's: tens of microseconds
            BenchLatency.record(h, 20_000 + i);
        }
        long overhead = allocatedAround(() -> { });
        // a scheduling stall in the measured phase: a histogram sized by what it has seen makes a new counts
        // array here (about 160 KiB for 300 ms)
        long allocated = allocatedAround(() -> BenchLatency.record(h, TimeUnit.MILLISECONDS.toNanos(300)));
        assertEquals(0, allocated - overhead, "octets allocated recording a 300 ms latency");
        assertEquals(10_001, h.getTotalCount());
        assertTrue(h.valuesAreEquivalent(TimeUnit.MILLISECONDS.toNanos(300), h.getMaxValue()), "max " + h.getMaxValue());
    }

    @Test
    void aLatencyAboveTheCeilingCountsAsTheCeiling() {
        Histogram h = BenchLatency.histogram();
        BenchLatency.record(h, TimeUnit.HOURS.toNanos(3));
        BenchLatency.record(h, -5); // not from a monotonic clock, but no negative latency either
        assertEquals(2, h.getTotalCount());
        assertTrue(h.valuesAreEquivalent(BenchLatency.MAX_NANOS, h.getMaxValue()), "max " + h.getMaxValue());
        assertEquals(0, h.getMinValue());
    }

    private static long allocatedAround(Runnable r) {
        long before = THREADS.getCurrentThreadAllocatedBytes();
        r.run();
        return THREADS.getCurrentThreadAllocatedBytes() - before;
    }
}
