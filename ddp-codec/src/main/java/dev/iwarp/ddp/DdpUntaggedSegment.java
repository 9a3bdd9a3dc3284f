package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * An untagged buffer model segment (RFC 5041 §4.3): the payload belongs to message MSN on queue QN,
 * at message offset MO. Send variants, RDMA Read Request and Terminate use it.
 */
public final class DdpUntaggedSegment extends DefaultByteBufHolder implements DdpSegment {
    /** Header octets (control, RsvdULP[0:7], RsvdULP[8:39], QN, MSN, MO). */
    public static final int HEADER_LENGTH = 18;

    private final boolean last;
    private final int ddpVersion;
    private final int rsvdUlp;
    private final int rsvdUlp2;
    private final int qn;
    private final int msn;
    private final int mo;

    public DdpUntaggedSegment(boolean last, int ddpVersion, int rsvdUlp, int rsvdUlp2, int qn, int msn, int mo,
                              ByteBuf payload) {
        super(payload);
        this.last = last;
        this.ddpVersion = ddpVersion & VERSION_MASK;
        this.rsvdUlp = rsvdUlp & 0xFF;
        this.rsvdUlp2 = rsvdUlp2;
        this.qn = qn;
        this.msn = msn;
        this.mo = mo;
    }

    /** A version-1 segment. */
    public DdpUntaggedSegment(boolean last, int rsvdUlp, int rsvdUlp2, int qn, int msn, int mo, ByteBuf payload) {
        this(last, VERSION_1, rsvdUlp, rsvdUlp2, qn, msn, mo, payload);
    }

    @Override
    public boolean isTagged() {
        return false;
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

    /** RsvdULP[8:39]: opaque to DDP (RDMAP's Invalidate STag, or zero). */
    public int rsvdUlp2() {
        return rsvdUlp2;
    }

    /** Queue Number (unsigned 32 bits). */
    public int qn() {
        return qn;
    }

    /** Message Sequence Number (unsigned 32 bits; 1 for a queue's first message). */
    public int msn() {
        return msn;
    }

    /** Message Offset of this segment's first payload octet (unsigned 32 bits). */
    public int mo() {
        return mo;
    }

    @Override
    public int headerLength() {
        return HEADER_LENGTH;
    }

    @Override
    public void encodeHeader(ByteBuf out) {
        writeHeader(out, controlOctet(), rsvdUlp, rsvdUlp2, qn, msn, mo);
    }

    /** RsvdULP2 of the untagged header at {@code header} in {@code ulpdu} (RFC 5041 §4.3), read in place. */
    public static int rsvdUlp2(ByteBuf ulpdu, int header) {
        return ulpdu.getInt(header + 2);
    }

    /** QN of the untagged header at {@code header} in {@code ulpdu}, read in place. */
    public static int qn(ByteBuf ulpdu, int header) {
        return ulpdu.getInt(header + 6);
    }

    /** MSN of the untagged header at {@code header} in {@code ulpdu}, read in place. */
    public static int msn(ByteBuf ulpdu, int header) {
        return ulpdu.getInt(header + 10);
    }

    /** MO of the untagged header at {@code header} in {@code ulpdu}, read in place. */
    public static int mo(ByteBuf ulpdu, int header) {
        return ulpdu.getInt(header + 14);
    }

    /** The 18 header octets (RFC 5041 §4.3): control octet, RsvdULP, RsvdULP2, QN, MSN, MO. */
    static void writeHeader(ByteBuf out, int control, int rsvdUlp, int rsvdUlp2, int qn, int msn, int mo) {
        if (HeaderOctets.fits(out, HEADER_LENGTH)) { // per segment sent: one pass, not a checked call per field
            HeaderOctets.untagged(out, control, rsvdUlp, rsvdUlp2, qn, msn, mo);
            return;
        }
        out.writeByte(control);
        out.writeByte(rsvdUlp);
        out.writeInt(rsvdUlp2);
        out.writeInt(qn);
        out.writeInt(msn);
        out.writeInt(mo);
    }

    @Override
    public DdpUntaggedSegment replace(ByteBuf content) {
        return new DdpUntaggedSegment(last, ddpVersion, rsvdUlp, rsvdUlp2, qn, msn, mo, content);
    }

    @Override
    public DdpUntaggedSegment copy() {
        return replace(content().copy());
    }

    @Override
    public DdpUntaggedSegment duplicate() {
        return replace(content().duplicate());
    }

    @Override
    public DdpUntaggedSegment retainedDuplicate() {
        return replace(content().retainedDuplicate());
    }

    @Override
    public DdpUntaggedSegment retain() {
        super.retain();
        return this;
    }

    @Override
    public DdpUntaggedSegment retain(int increment) {
        super.retain(increment);
        return this;
    }

    @Override
    public DdpUntaggedSegment touch() {
        super.touch();
        return this;
    }

    @Override
    public DdpUntaggedSegment touch(Object hint) {
        super.touch(hint);
        return this;
    }

    @Override
    public String toString() {
        return String.format("DDP untagged{%sDV %d RsvdULP 0x%02x/0x%08x QN %d MSN %d MO %d payload %d}",
                last ? "L " : "", ddpVersion, rsvdUlp, rsvdUlp2, Integer.toUnsignedLong(qn),
                Integer.toUnsignedLong(msn), Integer.toUnsignedLong(mo), content().readableBytes());
    }
}
