package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * A tagged buffer model segment (RFC 5041 §4.2): STag and TO of the Data Sink buffer where the
 * payload's first octet goes. RDMA Write and RDMA Read Response use it.
 */
public final class DdpTaggedSegment extends DefaultByteBufHolder implements DdpSegment {
    /** Header octets (control, RsvdULP, STag, TO). */
    public static final int HEADER_LENGTH = 14;

    private final boolean last;
    private final int ddpVersion;
    private final int rsvdUlp;
    private final int stag;
    private final long to;

    /** A tagged DDP segment (RFC 5041 §4.2); takes ownership of {@code payload}. */
    public DdpTaggedSegment(boolean last, int ddpVersion, int rsvdUlp, int stag, long to, ByteBuf payload) {
        super(payload);
        this.last = last;
        this.ddpVersion = ddpVersion & VERSION_MASK;
        this.rsvdUlp = rsvdUlp & 0xFF;
        this.stag = stag;
        this.to = to;
    }

    /** A version-1 segment. */
    public DdpTaggedSegment(boolean last, int rsvdUlp, int stag, long to, ByteBuf payload) {
        this(last, VERSION_1, rsvdUlp, stag, to, payload);
    }

    @Override
    public boolean isTagged() {
        return true;
    }

    @Override
    public boolean isLast() {
        return last;
    }

    @Override
    public int ddpVersion() {
        return ddpVersion;
    }

    @Override
    public int rsvdUlp() {
        return rsvdUlp;
    }

    @Override
    public int headerLength() {
        return HEADER_LENGTH;
    }

    /** Data Sink STag. */
    public int stag() {
        return stag;
    }

    /** Data Sink Tagged Offset of this segment's first payload octet. */
    public long to() {
        return to;
    }

    @Override
    public void encodeHeader(ByteBuf out) {
        writeHeader(out, controlOctet(), rsvdUlp, stag, to);
    }

    /** The Data Sink STag of the tagged header at {@code header} in {@code ulpdu} (RFC 5041 §4.2), read in place. */
    public static int stag(ByteBuf ulpdu, int header) {
        return ulpdu.getInt(header + 2);
    }

    /** The Data Sink TO of the tagged header at {@code header} in {@code ulpdu} (RFC 5041 §4.2), read in place. */
    public static long to(ByteBuf ulpdu, int header) {
        return ulpdu.getLong(header + 6);
    }

    /** The 14 header octets (RFC 5041 §4.2): control octet, RsvdULP, STag, TO. */
    static void writeHeader(ByteBuf out, int control, int rsvdUlp, int stag, long to) {
        if (HeaderOctets.fits(out, HEADER_LENGTH)) { // per segment sent: one pass, not a checked call per field
            HeaderOctets.tagged(out, control, rsvdUlp, stag, to);
            return;
        }
        out.writeByte(control);
        out.writeByte(rsvdUlp);
        out.writeInt(stag);
        out.writeLong(to);
    }

    @Override
    public DdpTaggedSegment replace(ByteBuf content) {
        return new DdpTaggedSegment(last, ddpVersion, rsvdUlp, stag, to, content);
    }

    @Override
    public DdpTaggedSegment copy() {
        return replace(content().copy());
    }

    @Override
    public DdpTaggedSegment duplicate() {
        return replace(content().duplicate());
    }

    @Override
    public DdpTaggedSegment retainedDuplicate() {
        return replace(content().retainedDuplicate());
    }

    @Override
    public DdpTaggedSegment retain() {
        super.retain();
        return this;
    }

    @Override
    public DdpTaggedSegment retain(int increment) {
        super.retain(increment);
        return this;
    }

    @Override
    public DdpTaggedSegment touch() {
        super.touch();
        return this;
    }

    @Override
    public DdpTaggedSegment touch(Object hint) {
        super.touch(hint);
        return this;
    }

    @Override
    public String toString() {
        return String.format("DDP tagged{%sDV %d RsvdULP 0x%02x STag 0x%08x TO 0x%016x payload %d}",
                last ? "L " : "", ddpVersion, rsvdUlp, stag, to, content().readableBytes());
    }
}
