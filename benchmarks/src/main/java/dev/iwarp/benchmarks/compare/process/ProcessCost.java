package dev.iwarp.benchmarks.compare.process;

import java.lang.management.ManagementFactory;

/**
 * What a whole process has spent so far: CPU nanoseconds (every thread: event loops, JIT compiler, GC) and the
 * octets its live threads allocated (-1: not measurable). The same counters serve answers to bench's cost question.
 */
record ProcessCost(long cpuNanos, long allocatedBytes) {
    static ProcessCost now() {
        long cpu = ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getProcessCpuTime() : -1;
        long alloc = -1;
        if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
                && t.isThreadAllocatedMemorySupported() && t.isThreadAllocatedMemoryEnabled()) {
            alloc = 0;
            for (long a : t.getThreadAllocatedBytes(t.getAllThreadIds())) {
                alloc += Math.max(0, a);
            }
        }
        return new ProcessCost(cpu, alloc);
    }
}
