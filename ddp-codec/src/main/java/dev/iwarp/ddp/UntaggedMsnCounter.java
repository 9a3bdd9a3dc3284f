package dev.iwarp.ddp;

/**
 * Transmit MSN of one untagged queue (RFC 5041 §5.3): the first message is MSN 1, then
 * +1 per message modulo 2<sup>32</sup> (0xFFFFFFFF is followed by 0). Not thread-safe: one per queue
 * per stream, on its event loop.
 */
public final class UntaggedMsnCounter {
    private int next = 1;

    /** A counter whose first {@link #next()} returns 1. */
    public UntaggedMsnCounter() {
    }

    /** A counter whose first {@link #next()} returns {@code firstMsn} (tests, resumed streams). */
    public UntaggedMsnCounter(int firstMsn) {
        this.next = firstMsn;
    }

    /** The MSN for the next message, without consuming it. */
    public int peek() {
        return next;
    }

    /** Consumes and returns the MSN for the next message. */
    public int next() {
        return next++;
    }
}
