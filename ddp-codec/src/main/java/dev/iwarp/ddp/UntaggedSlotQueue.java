package dev.iwarp.ddp;

/**
 * Expected-MSN and credit check for an untagged queue whose "buffers" are slots rather than posted
 * memory (RFC 5041 §5.3): QN 1 (RDMA Read Requests; credits = IRD), QN 2 (Terminate;
 * one credit), QN 3 (RFC 7306 Atomic Responses; credits = ORD). The messages on these queues are single
 * segments (MO 0, L=1); the ULP places their contents itself. The expected MSN starts at 1 and wraps
 * modulo 2<sup>32</sup>. Not thread-safe: confined to the stream's event loop.
 */
public final class UntaggedSlotQueue {
    private final int qn;
    private final int capacity;
    private int credits;
    private int expectedMsn;

    /**
     * @param qn       the queue number accepted
     * @param capacity slots (e.g. IRD); each accepted message takes one until {@link #release()}
     */
    public UntaggedSlotQueue(int qn, int capacity) {
        this(qn, capacity, 1);
    }

    /**
     * @param qn       the queue number accepted
     * @param capacity slots (e.g. IRD); each accepted message takes one until {@link #release()}
     * @param firstMsn MSN of the first message (1 for a new stream, RFC 5041 §6; other values for tests)
     */
    public UntaggedSlotQueue(int qn, int capacity, int firstMsn) {
        this.expectedMsn = firstMsn;
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity " + capacity);
        }
        this.qn = qn;
        this.capacity = capacity;
        this.credits = capacity;
    }

    /** The queue number accepted. */
    public int qn() {
        return qn;
    }

    /** MSN of the next message. */
    public int expectedMsn() {
        return expectedMsn;
    }

    /** Free slots. */
    public int credits() {
        return credits;
    }

    /**
     * Accepts message {@code msn} if it is the expected one and a slot is free, taking the slot.
     *
     * @return {@code null} if accepted; {@link DdpError#INVALID_MSN_RANGE} if {@code msn} is not the
     *         expected MSN; {@link DdpError#INVALID_MSN_NO_BUFFER} if it is but no slot is free. Nothing
     *         changes on an error.
     */
    public DdpError accept(int msn) {
        if (msn != expectedMsn) {
            return DdpError.INVALID_MSN_RANGE;
        }
        if (credits == 0) {
            return DdpError.INVALID_MSN_NO_BUFFER;
        }
        credits--;
        expectedMsn++;
        return null;
    }

    /**
     * Checks a whole single-segment message: QN ({@link DdpError#INVALID_QN}), then MSN and slot as
     * {@link #accept(int)}, then MO 0 ({@link DdpError#INVALID_MO}); takes the slot only if all pass.
     * Ownership: the caller keeps its reference to {@code segment}.
     *
     * @return {@code null} if accepted, else the error
     */
    public DdpError accept(DdpUntaggedSegment segment) {
        return accept(segment.qn(), segment.msn(), segment.mo());
    }

    /** As {@link #accept(DdpUntaggedSegment)} for a segment whose header was read in place. */
    public DdpError accept(int segmentQn, int msn, int mo) {
        if (segmentQn != qn) {
            return DdpError.INVALID_QN;
        }
        if (msn != expectedMsn) {
            return DdpError.INVALID_MSN_RANGE;
        }
        if (credits == 0) {
            return DdpError.INVALID_MSN_NO_BUFFER;
        }
        if (mo != 0) {
            return DdpError.INVALID_MO;
        }
        return accept(msn);
    }

    /**
     * Frees one slot (e.g. the Read Response for the oldest Read Request was sent).
     *
     * @throws IllegalStateException if every slot is already free
     */
    public void release() {
        if (credits == capacity) {
            throw new IllegalStateException("no slot in use on QN " + Integer.toUnsignedString(qn));
        }
        credits++;
    }
}
