package dev.iwarp.server.perftest;

import java.util.Arrays;

/** Latency samples in nanoseconds. */
final class LatencySamples {
    long[] ns;
    int count;

    LatencySamples(long capacity) {
        ns = new long[(int) Math.max(1, Math.min(capacity, 1 << 24))];
    }

    void add(long v) {
        if (count == ns.length) {
            ns = Arrays.copyOf(ns, Math.min(ns.length * 2, 1 << 26));
            if (count == ns.length) {
                return;
            }
        }
        ns[count++] = v;
    }
}
