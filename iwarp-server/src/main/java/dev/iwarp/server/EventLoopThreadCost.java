package dev.iwarp.server;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;

/**
 * The CPU time and heap allocation of the event loop threads {@code bench}'s connections run on, read from the
 * JVM's per-thread counters; -1 where the JVM cannot measure them.
 */
final class EventLoopThreadCost {
    static final EventLoopThreadCost NONE = new EventLoopThreadCost(new long[0]);

    private final long[] threads;

    private EventLoopThreadCost(long[] threads) {
        this.threads = threads;
    }

    /** The distinct event loop threads of {@code connections} (asks each loop which thread it is). */
    static EventLoopThreadCost of(List<BenchConnection> connections) throws ExecutionException, InterruptedException {
        Set<Long> ids = new LinkedHashSet<>();
        for (BenchConnection c : connections) {
            ids.add(c.connection().channel().eventLoop().submit(() -> Thread.currentThread().getId()).get());
        }
        return new EventLoopThreadCost(ids.stream().mapToLong(Long::longValue).toArray());
    }

    /** CPU nanoseconds these threads have used so far, or -1. */
    long cpuNanos() {
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

    /** Heap octets these threads have allocated so far, or -1. */
    long allocatedBytes() {
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
}
