package dev.iwarp.server.perftest;

/** The best rate over any {@code window} consecutive completions (messages per second). */
final class Peak {
    private final long[] ring;
    private long count;
    private double best;

    Peak(int window) {
        ring = new long[Math.max(1, window)];
    }

    void completed(long nanos) {
        int at = (int) (count % ring.length);
        if (count >= ring.length && nanos > ring[at]) {
            best = Math.max(best, ring.length * 1e9 / (nanos - ring[at]));
        }
        ring[at] = nanos;
        count++;
    }

    double rate() {
        return best;
    }
}
