package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;

import java.util.ArrayDeque;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The Data Sink side of one untagged queue (RFC 5041 §5.1, §5.3, §5.4), for an in-order receiver as
 * Linux siw: posted buffers are consumed in posting order, message MSN n lands in the n-th one, each
 * segment's payload is placed at its MO, and the message is delivered when its L=1 segment is placed.
 * RDMAP uses one for QN 0 (Sends); queues without posted buffers use {@link UntaggedSlotQueue}.
 *
 * <p>Checks per segment, in this order; the first failure is returned and nothing of the segment is
 * placed (RFC 5041 §5, siw_qp_rx.c):
 * <ol>
 *   <li>QN ≠ this queue's → {@link DdpError#INVALID_QN};</li>
 *   <li>MSN ≠ the expected MSN (an in-order receiver has a window of one message) →
 *       {@link DdpError#INVALID_MSN_RANGE};</li>
 *   <li>expected MSN, no buffer posted → {@link DdpError#INVALID_MSN_NO_BUFFER};</li>
 *   <li>MO ≠ octets of the message received so far → {@link DdpError#INVALID_MO};</li>
 *   <li>MO + payload length > posted length → {@link DdpError#MESSAGE_TOO_LONG} (siw says 0x02 here;
 *       we use the RFC's 0x05).</li>
 * </ol>
 * Every DDP error is fatal for the stream (RFC 5041 §7.1): after one, {@link #place} keeps returning
 * that error without placing. The expected MSN starts at 1 and wraps modulo 2<sup>32</sup>.
 *
 * <p>Not thread-safe: confined to the stream's event loop.
 *
 * @param <T> what the poster wants back with the message (e.g. a work request)
 */
public final class UntaggedReceiveQueue<T> {
    /** Posted receives kept for reuse once delivered or flushed (no allocation per receive). */
    private static final int SPARE_MAX = 16;

    private static final class Posted<T> {
        /** Where the message goes: a buffer, or a registered region (which may get its memory on demand). */
        ByteBuf target;
        TaggedBuffer region;
        int offset;
        int length;
        T context;
    }

    private final int qn;
    private final ArrayDeque<Posted<T>> posted = new ArrayDeque<>(1); // grows as used: idle streams stay small
    private final FreeList<Posted<T>> spare = new FreeList<>(SPARE_MAX);
    /** What {@link #place} returns for each delivery: one object, filled again each time. */
    private final UntaggedPlacementResult<T> delivered = UntaggedPlacementResult.forDeliveries();
    private int expectedMsn;
    private int received;
    private DdpError failure;

    /** @param qn the queue number this queue accepts; the first message is MSN 1 */
    public UntaggedReceiveQueue(int qn) {
        this(qn, 1);
    }

    /**
     * @param qn       the queue number this queue accepts
     * @param firstMsn MSN of the first message (1 for a new stream, RFC 5041 §6; other values for tests)
     */
    public UntaggedReceiveQueue(int qn, int firstMsn) {
        this.qn = qn;
        this.expectedMsn = firstMsn;
    }

    /** This queue's QN. */
    public int qn() {
        return qn;
    }

    /** MSN the next segment must carry (the message in progress or the next one). */
    public int expectedMsn() {
        return expectedMsn;
    }

    /** Buffers posted and not yet delivered or flushed (including a partly filled one). */
    public int postedCount() {
        return posted.size();
    }

    /** The error that stopped this queue, or {@code null}. */
    public DdpError failure() {
        return failure;
    }

    /**
     * Posts a receive buffer: the octets {@code [offset, offset + length)} of {@code target} (absolute
     * indices; {@code target}'s indices are never moved). Nothing outside that range is ever written.
     * Ownership: the queue takes no reference; the poster keeps {@code target} alive until
     * {@code context} comes back, from a delivery or {@link #flush}.
     *
     * @throws IndexOutOfBoundsException if the range is not within {@code target}'s capacity
     */
    public void post(ByteBuf target, int offset, int length, T context) {
        Objects.requireNonNull(target, "target");
        if (offset < 0 || length < 0 || offset > target.capacity() - length) {
            throw new IndexOutOfBoundsException("offset " + offset + " length " + length + " in capacity "
                    + target.capacity());
        }
        posted.addLast(posted(target, null, offset, length, context));
    }

    /**
     * Posts the octets {@code [offset, offset + length)} of a registered region as a receive buffer, as above.
     * An on-demand region ({@link TaggedBufferTable#registerOnDemand}) gets its memory only when a segment is
     * placed, so a receive that waits costs no memory.
     *
     * @throws IndexOutOfBoundsException if the range is not within the region
     */
    public void post(TaggedBuffer region, int offset, int length, T context) {
        Objects.requireNonNull(region, "region");
        if (offset < 0 || length < 0 || offset > region.length() - length) {
            throw new IndexOutOfBoundsException("offset " + offset + " length " + length + " in a region of "
                    + region.length());
        }
        posted.addLast(posted(null, region, offset, length, context));
    }

    private Posted<T> posted(ByteBuf target, TaggedBuffer region, int offset, int length, T context) {
        Posted<T> p = spare.poll();
        if (p == null) {
            p = new Posted<>();
        }
        p.target = target;
        p.region = region;
        p.offset = offset;
        p.length = length;
        p.context = context;
        return p;
    }

    /** {@code p} is done with: it forgets what it pointed at and waits to be posted again. */
    private T recycle(Posted<T> p) {
        T context = p.context;
        p.target = null;
        p.region = null;
        p.context = null;
        spare.offer(p);
        return context;
    }

    /**
     * Validates and places one segment (checks above). Ownership: the caller keeps its reference to
     * {@code segment}; its payload indices are not changed. A delivery's result is valid until the next
     * call (see {@link UntaggedPlacementResult}).
     */
    public UntaggedPlacementResult<T> place(DdpUntaggedSegment segment) {
        return place(segment.qn(), segment.msn(), segment.mo(), segment.isLast(), segment.rsvdUlp(),
                segment.rsvdUlp2(), segment.content());
    }

    /**
     * As {@link #place(DdpUntaggedSegment)} for a segment whose header was read in place: its header
     * fields, and its payload from {@code payload}'s reader index on (indices unchanged).
     */
    public UntaggedPlacementResult<T> place(int segmentQn, int msn, int mo, boolean last, int rsvdUlp, int rsvdUlp2,
                                      ByteBuf payload) {
        int len = payload.readableBytes();
        DdpError refused = check(segmentQn, msn, mo, len);
        if (refused != null) {
            return failure != null ? UntaggedPlacementResult.error(failure) : fail(refused);
        }
        placeAt(placeOffset(), payload, payload.readerIndex(), len);
        return placed(len, last, rsvdUlp, rsvdUlp2);
    }

    /**
     * The checks of {@link #place} for a segment of {@code payloadLength} octets whose payload has not been
     * read yet, so that a framing can read it straight into the posted buffer ({@link #placeOffset},
     * {@link #placeAt}, {@link #view}) and then report it with {@link #placed}. Changes nothing: a refused
     * segment is refused again, and the queue stopped, by {@link #place}.
     *
     * @return null when the segment may be placed, else the error {@link #place} would return
     */
    public DdpError check(int segmentQn, int msn, int mo, int payloadLength) {
        if (failure != null) {
            return failure;
        }
        if (segmentQn != qn) {
            return DdpError.INVALID_QN;
        }
        if (msn != expectedMsn) {
            return DdpError.INVALID_MSN_RANGE;
        }
        Posted<T> buffer = posted.peekFirst();
        if (buffer == null) {
            return DdpError.INVALID_MSN_NO_BUFFER;
        }
        if (mo != received) {
            return DdpError.INVALID_MO;
        }
        if (payloadLength > buffer.length - received) {
            return DdpError.MESSAGE_TOO_LONG;
        }
        return null;
    }

    /**
     * Where the payload of a segment that passed {@link #check} begins, in the octets of the first posted
     * buffer ({@link #placeAt}'s and {@link #view}'s offsets).
     */
    public int placeOffset() {
        return posted.getFirst().offset + received;
    }

    /**
     * Copies {@code len} octets of {@code src} at {@code srcIndex} into the first posted buffer at
     * {@code offset} (as {@link #placeOffset} gave, for a segment that passed {@link #check}); indices unchanged.
     */
    public void placeAt(int offset, ByteBuf src, int srcIndex, int len) {
        Posted<T> buffer = posted.getFirst();
        if (buffer.target != null) {
            TaggedBuffer.copy(src, srcIndex, buffer.target, offset, len);
        } else {
            buffer.region.placeAt(offset, src, srcIndex, len);
        }
    }

    /**
     * A writable view of the first posted buffer's octets {@code [offset, offset + length)} for a segment that
     * passed {@link #check}, as {@link TaggedBuffer#view}; null when the buffer has no such view (a posted
     * {@code ByteBuf}, or a region without memory yet): then {@link #placeAt}.
     */
    public ByteBuf view(int offset, int length) {
        return view(offset, length, null);
    }

    /** As {@link #view(int, int)}, the view taken from {@code views} ({@link TaggedBuffer#view(int, int, RegionViews)}). */
    public ByteBuf view(int offset, int length, RegionViews views) {
        Posted<T> buffer = posted.getFirst();
        return buffer.region != null ? buffer.region.view(offset, length, views) : null;
    }

    /**
     * The payload of a segment that passed {@link #check} ({@code len} octets) is in place: the message goes on,
     * or, for its L=1 segment, is delivered (RFC 5041 §5.4).
     */
    public UntaggedPlacementResult<T> placed(int len, boolean last, int rsvdUlp, int rsvdUlp2) {
        received += len;
        if (!last) {
            return UntaggedPlacementResult.placed();
        }
        Posted<T> buffer = posted.pollFirst();
        int length = received;
        int deliveredMsn = expectedMsn++;
        received = 0;
        return delivered.deliver(recycle(buffer), qn, deliveredMsn, length, rsvdUlp, rsvdUlp2);
    }

    /**
     * Hands back every posted buffer's context in posting order (including one partly filled), e.g. to
     * complete them in error at teardown (RFC 5041 §6), and forgets them. The queue keeps its MSN.
     */
    public void flush(Consumer<? super T> consumer) {
        Posted<T> p;
        while ((p = posted.pollFirst()) != null) {
            consumer.accept(recycle(p));
        }
        received = 0;
    }

    private UntaggedPlacementResult<T> fail(DdpError error) {
        failure = error;
        return UntaggedPlacementResult.error(error);
    }
}
