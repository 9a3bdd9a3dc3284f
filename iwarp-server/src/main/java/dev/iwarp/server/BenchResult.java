package dev.iwarp.server;

import org.HdrHistogram.Histogram;

import java.util.List;

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
record BenchResult(Bench.Op op, int size, int depth, long iterations, long bytes, long nanos, Histogram latency,
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
