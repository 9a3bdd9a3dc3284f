package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * One DDP message on its way out, cut into segments only as they are asked for (RFC 5041 §5.2), so a
 * sender can produce segments while its channel is writable and resume later: nothing of a large
 * message sits in an outbound buffer before the channel can take it. Made by {@link DdpSegmenter},
 * which fixes the header fields, the MSN of an untagged message and the largest payload per segment
 * (MULPDU minus the header) when the message is created.
 *
 * <p>Segments have L=1 on exactly the last one, TO / MO advance by the payload octets before each
 * segment, and every payload is a slice of the message (no copy). A zero-length message is one L=1
 * segment without payload.
 *
 * <p>Ownership: the message owns one reference to its payload from creation; each segment owns its
 * own reference to its slice; the message drops its reference with its last segment, or in
 * {@link #discard()}. Once done, the message may be given back to its segmenter ({@link #recycle()}),
 * which makes a later message of the same object: a sender that does so keeps no reference to it.
 * Not thread-safe: confined to the stream's event loop.
 */
public final class DdpOutboundMessage {
    /** The segmenter that made this message and takes it back ({@link #recycle()}). */
    private final DdpSegmenter owner;
    private boolean tagged;
    private int ddpVersion;
    private int rsvdUlp;
    private int stagOrRsvdUlp2;
    private long to;
    private int qn;
    private int msn;
    private int length;
    private int maxPayload;
    private ByteBuf payload;
    private ByteBufAllocator copyInto;
    private int offset;
    private int segments;
    /** Segments whose payload the lower layer reported copied ({@link #payloadCopiedBelow()}). */
    private int segmentsCopiedBelow;
    private boolean started;
    private boolean done;
    /** Given back to its segmenter: waiting to be made into another message. */
    private boolean recycled;

    DdpOutboundMessage(DdpSegmenter owner) {
        this.owner = owner;
    }

    /** Makes this (new or recycled) object the given message, as if just constructed. */
    DdpOutboundMessage init(boolean tagged, int ddpVersion, int rsvdUlp, int stagOrRsvdUlp2, long to, int qn,
                            int msn, ByteBuf payload, int maxPayload) {
        this.tagged = tagged;
        this.ddpVersion = ddpVersion;
        this.rsvdUlp = rsvdUlp;
        this.stagOrRsvdUlp2 = stagOrRsvdUlp2;
        this.to = to;
        this.qn = qn;
        this.msn = msn;
        this.payload = payload;
        this.length = payload.readableBytes();
        this.maxPayload = maxPayload;
        copyInto = null;
        offset = 0;
        segments = 0;
        segmentsCopiedBelow = 0;
        started = false;
        done = false;
        recycled = false;
        return this;
    }

    /**
     * Makes each segment carry a copy of its payload octets, taken from {@code alloc} when the
     * segment is produced, instead of a slice of the message: for memory that may change while the
     * lower layer computes a checksum over it (RFC 5044 §4.4). Only one segment's worth is copied at a
     * time. With {@code null}, segments not produced yet are slices again (the lower layer copies them).
     * Returns this message.
     */
    public DdpOutboundMessage copyEachSegment(ByteBufAllocator alloc) {
        this.copyInto = alloc;
        return this;
    }

    /** Whether each segment carries a copy of its payload ({@link #copyEachSegment}). */
    public boolean copiesEachSegment() {
        return copyInto != null;
    }

    /**
     * Gives this message back to the segmenter that made it, which makes a later message of this object:
     * a sender that keeps no reference to its messages after their last segment allocates none per
     * message at steady state.
     *
     * @throws IllegalStateException if segments remain (discard first), or it was given back already
     */
    public void recycle() {
        if (!done || recycled) {
            throw new IllegalStateException((recycled ? "recycled twice: " : "segments remain: ") + this);
        }
        recycled = true;
        owner.recycle(this);
    }

    /** Whether every segment was produced, or the message was discarded. */
    public boolean isDone() {
        return done;
    }

    /** Whether segments remain to be produced. */
    public boolean hasNextSegment() {
        return !done;
    }

    /** Whether the next segment is the message's last (L=1): its payload is what remains. */
    public boolean nextSegmentIsLast() {
        return length - offset <= maxPayload;
    }

    /** Segments produced so far. */
    public int segmentsProduced() {
        return segments;
    }

    /**
     * The next segment; the caller owns it.
     *
     * @throws IllegalStateException when the last segment was already produced or the message was
     *                               discarded
     */
    public DdpSegment nextSegment() {
        int n = nextPayloadLength();
        boolean last = offset + n == length;
        long segmentTo = to + offset;
        int mo = offset;
        ByteBuf slice = takePayload(n, last);
        return tagged
                ? new DdpTaggedSegment(last, ddpVersion, rsvdUlp, stagOrRsvdUlp2, segmentTo, slice)
                : new DdpUntaggedSegment(last, ddpVersion, rsvdUlp, stagOrRsvdUlp2, qn, msn, mo, slice);
    }

    /**
     * The next segment without a segment object: writes its DDP header (RFC 5041 §4.2, §4.3:
     * 14 octets tagged, 18 untagged; the octets {@link DdpSegment#encodeHeader} writes) to {@code header}
     * and returns its payload, which the caller owns. Otherwise as {@link #nextSegment()}.
     *
     * @throws IllegalStateException when the last segment was already produced or the message was
     *                               discarded
     */
    public ByteBuf nextSegment(ByteBuf header) {
        int n = nextPayloadLength();
        boolean last = offset + n == length;
        int control = DdpSegment.controlOctet(tagged, last, ddpVersion);
        if (tagged) {
            DdpTaggedSegment.writeHeader(header, control, rsvdUlp, stagOrRsvdUlp2, to + offset);
        } else {
            DdpUntaggedSegment.writeHeader(header, control, rsvdUlp, stagOrRsvdUlp2, qn, msn, offset);
        }
        return takePayload(n, last);
    }

    private int nextPayloadLength() {
        if (done) {
            throw new IllegalStateException("no segment left");
        }
        return Math.min(maxPayload, length - offset);
    }

    /** The next {@code n} payload octets as a slice (or copy), advancing past them. */
    private ByteBuf takePayload(int n, boolean last) {
        started = true;
        segments++;
        ByteBuf slice;
        if (copyInto != null) {
            // the source's getBytes into the copy: between direct buffers with addresses a plain memory
            // copy, where writeBytes(source) builds NIO views of the source on some allocators
            slice = copyInto.directBuffer(n, n);
            payload.getBytes(payload.readerIndex() + offset, slice, 0, n);
            slice.writerIndex(n);
            if (last) {
                payload.release();
            }
        } else if (last && offset == 0) {
            slice = payload; // the whole message in one segment: hand on the message's own reference
        } else {
            slice = payload.retainedSlice(payload.readerIndex() + offset, n);
            if (last) {
                payload.release();
            }
        }
        offset += n;
        if (last) {
            payload = null;
            done = true;
        }
        return slice;
    }

    /** Drops the segments not produced yet and releases the message's payload reference. Idempotent. */
    public void discard() {
        if (!done) {
            done = true;
            payload.release();
            payload = null;
        }
    }

    /**
     * Called by the lower layer's adapter when the framing copied the payload of the segment it just took
     * into a buffer of its own and released the payload (for MPA: a small FPDU built whole). See
     * {@link #sourceReleased()}.
     */
    public void payloadCopiedBelow() {
        segmentsCopiedBelow++;
    }

    /**
     * Whether the message's source memory is free: every segment was produced, and each carried a copy of its
     * payload ({@link #copyEachSegment}) or had its payload copied by the lower layer ({@link
     * #payloadCopiedBelow()}). A sender may then report the message sent before its octets reach the socket:
     * later changes to the source cannot change what goes out.
     */
    public boolean sourceReleased() {
        return done && segments > 0 && offset == length && (copyInto != null || segmentsCopiedBelow == segments);
    }

    /** Whether at least one segment was produced (an abandoned message would leave the peer half a message). */
    public boolean isStarted() {
        return started;
    }

    /** Whether the message goes to a tagged buffer (STag and TO) rather than an untagged queue. */
    public boolean isTagged() {
        return tagged;
    }

    /** RsvdULP[0:7] of every segment (RDMAP's control octet). */
    public int rsvdUlp() {
        return rsvdUlp;
    }

    /** Octets of each segment's DDP header: 14 tagged, 18 untagged (RFC 5041 §4.2, §4.3). */
    public int headerLength() {
        return tagged ? DdpTaggedSegment.HEADER_LENGTH : DdpUntaggedSegment.HEADER_LENGTH;
    }

    /** Payload octets of the whole message. */
    public int length() {
        return length;
    }

    /** Payload octets not yet handed out in segments. */
    public int remaining() {
        return length - offset;
    }

    /** QN of an untagged message. */
    public int qn() {
        return qn;
    }

    /** MSN of an untagged message. */
    public int msn() {
        return msn;
    }

    @Override
    public String toString() {
        return tagged
                ? String.format("DDP tagged message{RsvdULP 0x%02x STag 0x%08x TO 0x%016x length %d, %d sent}",
                rsvdUlp, stagOrRsvdUlp2, to, length, offset)
                : String.format("DDP untagged message{RsvdULP 0x%02x QN %d MSN %d length %d, %d sent}", rsvdUlp,
                Integer.toUnsignedLong(qn), Integer.toUnsignedLong(msn), length, offset);
    }
}
