package dev.iwarp.server;

/**
 * The iterations whose main work request a {@link BenchConnection} posted signaled, in posting order: a completion
 * of a send queue comes in posting order (RFC 5040 §5.5), so a signaled request's completion also says that every
 * unsignaled one posted before it completed (verbs' selective signaling, perftest's {@code --cq-mod}). At most
 * {@code depth} are in flight; confined to the connection's event loop.
 */
final class SignaledIterations {
    private final long[] ring;
    private long head;
    private long tail;

    SignaledIterations(int depth) {
        ring = new long[Math.max(1, depth)];
    }

    /** {@code it} was posted signaled. */
    void add(long it) {
        if (tail - head == ring.length) {
            throw new IllegalStateException("more than " + ring.length + " signaled requests in flight");
        }
        ring[(int) (tail++ % ring.length)] = it;
    }

    /** The iteration of the oldest signaled request in flight, whose completion just came; -1 if none. */
    long poll() {
        return head == tail ? -1 : ring[(int) (head++ % ring.length)];
    }

    /**
     * Whether iteration {@code it} of a burst of {@code n} starting at {@code first} goes signaled: every
     * {@code every}-th iteration, and the last of each burst, so that nothing posted waits for a completion that
     * no later post would bring.
     */
    static boolean signaled(long it, long first, int n, int every) {
        return it == first + n - 1 || (it + 1) % every == 0;
    }
}
