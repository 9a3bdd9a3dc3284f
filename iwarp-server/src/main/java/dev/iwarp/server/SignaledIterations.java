package dev.iwarp.server;

/**
 * The iterations whose main work request a {@link BenchConnection} posted signaled, in posting order: a completion
 * of a send queue comes in posting order (RFC 5040 §5.5), so a signaled request's completion also says that every
 * unsignaled one posted before it completed (verbs' selective signaling, perftest's {@code --cq-mod}). At most
 * {@code depth} are in flight; confined to the connection's event loop.
 */
final class SignaledIterations {
    /** At {@code index & (length - 1)}: a mask, not a 64-bit division per message. */
    private final long[] ring;
    private final int depth;
    private long head;
    private long tail;

    SignaledIterations(int depth) {
        this.depth = Math.max(1, depth);
        ring = new long[ringLength(depth)];
    }

    /** The smallest power of two that is at least {@code depth} (and 1). */
    static int ringLength(int depth) {
        return depth <= 1 ? 1 : Integer.highestOneBit(depth - 1) << 1;
    }

    /** {@code it} was posted signaled. */
    void add(long it) {
        if (tail - head == depth) {
            throw new IllegalStateException("more than " + depth + " signaled requests in flight");
        }
        ring[(int) tail++ & (ring.length - 1)] = it;
    }

    /** The iteration of the oldest signaled request in flight, whose completion just came; -1 if none. */
    long poll() {
        return head == tail ? -1 : ring[(int) head++ & (ring.length - 1)];
    }

    /**
     * Whether iteration {@code it} of a burst of {@code n} starting at {@code first} goes signaled: every
     * {@code every}-th iteration, and the last of each burst, so that nothing posted waits for a completion that
     * no later post would bring.
     */
    static boolean signaled(long it, long first, int n, int every) {
        return every == 1 || it == first + n - 1 || (it + 1) % every == 0;
    }
}
