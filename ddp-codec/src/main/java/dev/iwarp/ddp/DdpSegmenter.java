package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The Data Source's segmentation (RFC 5041 §5.2): cuts one ULP message into DDP segments whose
 * header plus payload fit MULPDU, with L=1 on exactly the last one and TO / MO advancing by the payload
 * octets before each segment. A zero-length message is one L=1 segment without payload. Every payload
 * is a retained slice of the message (no copy); segments go out in increasing TO / MO order.
 *
 * <p>Also keeps the transmit MSN of each untagged queue (first message MSN 1, wrapping modulo
 * 2<sup>32</sup>). One instance per stream, confined to its event loop.
 */
public final class DdpSegmenter {
    /** Largest QN for which {@link #segmentUntagged(int, int, int, ByteBuf, List)} keeps an MSN counter. */
    public static final int MAX_COUNTED_QN = 0xFFFF;

    private final MulpduSource mulpdu;
    private final int ddpVersion;
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

    /**
     * Segments a tagged message (RDMA Write, RDMA Read Response) for Data Sink {@code stag} starting at
     * {@code to}. Ownership: each segment holds its own reference to its payload (a retained slice of
     * {@code message}'s readable octets); the caller keeps its reference to {@code message} and its
     * indices are not changed.
     *
     * @return the number of segments added to {@code out}
     * @throws IllegalStateException    if MULPDU leaves no room for payload after the 14-octet header
     * @throws IllegalArgumentException if the message would run past TO 2<sup>64</sup>−1
     */
    public int segmentTagged(int rsvdUlp, int stag, long to, ByteBuf message, List<? super DdpTaggedSegment> out) {
        int length = message.readableBytes();
        if (length > 0 && Long.compareUnsigned(to + length - 1, to) < 0) {
            throw new IllegalArgumentException(String.format("TO 0x%016x + %d wraps", to, length));
        }
        int max = maxPayload(DdpTaggedSegment.HEADER_LENGTH);
        int start = message.readerIndex();
        int offset = 0;
        int count = 0;
        do {
            int n = Math.min(max, length - offset);
            boolean last = offset + n == length;
            out.add(new DdpTaggedSegment(last, ddpVersion, rsvdUlp, stag, to + offset,
                    message.retainedSlice(start + offset, n)));
            offset += n;
            count++;
        } while (offset < length);
        return count;
    }

    /**
     * Segments an untagged message (Send variants, Read Request, Terminate) on queue {@code qn} with the
     * given MSN. Ownership as for {@link #segmentTagged}.
     *
     * @param rsvdUlp2 RsvdULP[8:39] (RDMAP's Invalidate STag, or 0)
     * @return the number of segments added to {@code out}
     * @throws IllegalStateException if MULPDU leaves no room for payload after the 18-octet header
     */
    public int segmentUntagged(int rsvdUlp, int rsvdUlp2, int qn, int msn, ByteBuf message,
                               List<? super DdpUntaggedSegment> out) {
        int length = message.readableBytes();
        int max = maxPayload(DdpUntaggedSegment.HEADER_LENGTH);
        int start = message.readerIndex();
        int offset = 0;
        int count = 0;
        do {
            int n = Math.min(max, length - offset);
            boolean last = offset + n == length;
            out.add(new DdpUntaggedSegment(last, ddpVersion, rsvdUlp, rsvdUlp2, qn, msn, offset,
                    message.retainedSlice(start + offset, n)));
            offset += n;
            count++;
        } while (offset < length);
        return count;
    }

    /**
     * As {@link #segmentUntagged(int, int, int, int, ByteBuf, List)}, taking the queue's next transmit
     * MSN (1 for its first message).
     *
     * @return the MSN used
     * @throws IllegalArgumentException if {@code qn} is not in 0..{@value #MAX_COUNTED_QN}
     */
    public int segmentUntagged(int rsvdUlp, int rsvdUlp2, int qn, ByteBuf message,
                               List<? super DdpUntaggedSegment> out) {
        UntaggedMsnCounter counter = counter(qn);
        int msn = counter.peek();
        segmentUntagged(rsvdUlp, rsvdUlp2, qn, msn, message, out);
        counter.next();
        return msn;
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
