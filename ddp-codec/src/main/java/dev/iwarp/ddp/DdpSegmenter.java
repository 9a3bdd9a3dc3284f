package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The Data Source's segmentation (RFC 5041 §5.2): makes {@link DdpOutboundMessage}s whose segments
 * (header plus payload) fit MULPDU, asked of the lower layer once per message, with the stream's DDP
 * version. Also keeps the transmit MSN of each untagged queue (first message MSN 1, wrapping modulo
 * 2<sup>32</sup>; RFC 5041 §5.3). One instance per stream, confined to its event loop.
 *
 * <p>The {@code segment...} methods cut a whole message at once into a list, for tests and tools;
 * a sender that respects backpressure takes the message and asks for one segment at a time.
 */
public final class DdpSegmenter {
    /** Largest QN for which the segmenter keeps an MSN counter. */
    public static final int MAX_COUNTED_QN = 0xFFFF;

    /** Messages given back, kept for reuse (at most {@link #RECYCLED_MAX}). */
    static final int RECYCLED_MAX = 128; // as many messages as a send queue 128 deep queues while unwritable

    private final MulpduSource mulpdu;
    private final int ddpVersion;
    private final FreeList<DdpOutboundMessage> recycled = new FreeList<>(RECYCLED_MAX);
    private UntaggedMsnCounter[] counters = new UntaggedMsnCounter[4];

    /** @param mulpdu asked once per message for the lower layer's MULPDU */
    public DdpSegmenter(MulpduSource mulpdu) {
        this(mulpdu, DdpSegment.VERSION_1);
    }

    /**
     * @param mulpdu     asked once per message for the lower layer's MULPDU
     * @param ddpVersion DV of every segment: 1 (RFC 5041), or 0 on an MPA Rev 0 / RDMAC stream
     */
    public DdpSegmenter(MulpduSource mulpdu, int ddpVersion) {
        this.mulpdu = Objects.requireNonNull(mulpdu, "mulpdu");
        if ((ddpVersion & ~DdpSegment.VERSION_MASK) != 0) {
            throw new IllegalArgumentException("DV is 2 bits: " + ddpVersion);
        }
        this.ddpVersion = ddpVersion;
    }

    /** DV of every segment this segmenter makes. */
    public int ddpVersion() {
        return ddpVersion;
    }

    /**
     * A tagged message (RDMA Write, RDMA Read Response) for Data Sink {@code stag} starting at
     * {@code to}. Takes ownership of {@code payload} (its readable octets are the message).
     *
     * @throws IllegalStateException    if MULPDU leaves no room for payload after the 14-octet header
     * @throws IllegalArgumentException if the message would run past TO 2<sup>64</sup>−1
     */
    public DdpOutboundMessage tagged(int rsvdUlp, int stag, long to, ByteBuf payload) {
        try {
            int length = payload.readableBytes();
            if (length > 0 && Long.compareUnsigned(to + length - 1, to) < 0) {
                throw new IllegalArgumentException(String.format("TO 0x%016x + %d wraps", to, length));
            }
            int max = maxPayload(DdpTaggedSegment.HEADER_LENGTH);
            return newMessage().init(true, ddpVersion, rsvdUlp, stag, to, 0, 0, payload, max);
        } catch (RuntimeException e) {
            payload.release();
            throw e;
        }
    }

    /**
     * An untagged message (Send variants, Read Request, Terminate, ...) on queue {@code qn}, taking
     * the queue's next transmit MSN. Takes ownership of {@code payload}.
     *
     * @param rsvdUlp2 RsvdULP[8:39] (RDMAP's Invalidate STag, or 0)
     * @throws IllegalStateException    if MULPDU leaves no room for payload after the 18-octet header
     * @throws IllegalArgumentException if {@code qn} is not in 0..{@value #MAX_COUNTED_QN}
     */
    public DdpOutboundMessage untagged(int rsvdUlp, int rsvdUlp2, int qn, ByteBuf payload) {
        UntaggedMsnCounter counter;
        try {
            counter = counter(qn);
        } catch (RuntimeException e) {
            payload.release();
            throw e;
        }
        DdpOutboundMessage m = untagged(rsvdUlp, rsvdUlp2, qn, counter.peek(), payload);
        counter.next();
        return m;
    }

    /** As {@link #untagged(int, int, int, ByteBuf)} with an explicit MSN; no counter moves. */
    public DdpOutboundMessage untagged(int rsvdUlp, int rsvdUlp2, int qn, int msn, ByteBuf payload) {
        int max;
        try {
            max = maxPayload(DdpUntaggedSegment.HEADER_LENGTH);
        } catch (RuntimeException e) {
            payload.release();
            throw e;
        }
        return newMessage().init(false, ddpVersion, rsvdUlp, rsvdUlp2, 0, qn, msn, payload, max);
    }

    /** See {@link DdpOutboundMessage#recycle()}. */
    void recycle(DdpOutboundMessage m) {
        recycled.offer(m);
    }

    private DdpOutboundMessage newMessage() {
        DdpOutboundMessage m = recycled.poll();
        return m != null ? m : new DdpOutboundMessage(this);
    }

    /**
     * Segments a whole tagged message into {@code out}. The caller keeps its reference to
     * {@code message} (each segment holds its own retained slice) and its indices do not move.
     *
     * @return the number of segments added
     */
    public int segmentTagged(int rsvdUlp, int stag, long to, ByteBuf message, List<? super DdpTaggedSegment> out) {
        return drain(tagged(rsvdUlp, stag, to, message.retainedDuplicate()), out);
    }

    /**
     * Segments a whole untagged message with the given MSN into {@code out}; ownership as for
     * {@link #segmentTagged}.
     *
     * @return the number of segments added
     */
    public int segmentUntagged(int rsvdUlp, int rsvdUlp2, int qn, int msn, ByteBuf message,
                               List<? super DdpUntaggedSegment> out) {
        return drain(untagged(rsvdUlp, rsvdUlp2, qn, msn, message.retainedDuplicate()), out);
    }

    /**
     * As {@link #segmentUntagged(int, int, int, int, ByteBuf, List)}, taking the queue's next transmit
     * MSN (1 for its first message).
     *
     * @return the MSN used
     */
    public int segmentUntagged(int rsvdUlp, int rsvdUlp2, int qn, ByteBuf message,
                               List<? super DdpUntaggedSegment> out) {
        DdpOutboundMessage m = untagged(rsvdUlp, rsvdUlp2, qn, message.retainedDuplicate());
        drain(m, out);
        return m.msn();
    }

    @SuppressWarnings("unchecked")
    private static int drain(DdpOutboundMessage m, List<?> out) {
        int count = 0;
        while (m.hasNextSegment()) {
            ((List<Object>) out).add(m.nextSegment());
            count++;
        }
        return count;
    }

    /**
     * The transmit MSN counter of {@code qn}, created on first use.
     *
     * @throws IllegalArgumentException if {@code qn} is not in 0..{@value #MAX_COUNTED_QN}
     */
    public UntaggedMsnCounter counter(int qn) {
        if (qn < 0 || qn > MAX_COUNTED_QN) {
            throw new IllegalArgumentException("QN " + Integer.toUnsignedString(qn) + " outside 0.." + MAX_COUNTED_QN);
        }
        if (qn >= counters.length) {
            counters = Arrays.copyOf(counters, Math.max(qn + 1, counters.length * 2));
        }
        UntaggedMsnCounter c = counters[qn];
        if (c == null) {
            c = new UntaggedMsnCounter();
            counters[qn] = c;
        }
        return c;
    }

    /** Largest payload per segment for this header: MULPDU − header (RFC 5041 §5.2). */
    private int maxPayload(int headerLength) {
        int m = mulpdu.mulpdu();
        if (m <= headerLength) {
            throw new IllegalStateException("MULPDU " + m + " leaves no room after the " + headerLength
                    + "-octet DDP header");
        }
        return m - headerLength;
    }
}
