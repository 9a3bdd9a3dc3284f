package dev.iwarp.server;

import dev.iwarp.server.wire.WireRegion;
import dev.iwarp.verbs.Sge;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * rping's 16-octet buffer advertisement, all big-endian (rdma-core's rping.c): 8-octet TO, 4-octet
 * STag, 4-octet size. Over VI/TCP the same octets carry the 8-octet virtual address and the 4-octet
 * memory handle. The same layout is used for the target region in {@code serve}'s MPA Reply Private
 * Data and in its VI/TCP ConnectAccept's Calling Discriminator.
 */
public record Advertisement(long to, int stag, int size) {
    public static final int LENGTH = 16;

    /** The advertisement of an SGE: its TO, its region's STag and its length. */
    public static Advertisement of(Sge sge) {
        return new Advertisement(sge.to(), sge.region().stag(), sge.length());
    }

    /** The advertisement of {@code length} octets of {@code r} from {@code offset}, on either wire. */
    public static Advertisement of(WireRegion r, int offset, int length) {
        return new Advertisement(r.remoteAddress(offset), r.remoteHandle(), length);
    }

    /** Reads the 16 octets at {@code index} of {@code buf} (indexes unchanged). */
    public static Advertisement decode(ByteBuf buf, int index) {
        return new Advertisement(buf.getLong(index), buf.getInt(index + 8), buf.getInt(index + 12));
    }

    /** Decodes 16 octets. */
    public static Advertisement decode(byte[] b) {
        if (b.length != LENGTH) {
            throw new IllegalArgumentException("an advertisement is 16 octets: " + b.length);
        }
        return decode(Unpooled.wrappedBuffer(b), 0);
    }

    /** Writes the 16 octets at {@code index} of {@code buf} (indexes unchanged). */
    public void encode(ByteBuf buf, int index) {
        buf.setLong(index, to).setInt(index + 8, stag).setInt(index + 12, size);
    }

    public byte[] toBytes() {
        byte[] b = new byte[LENGTH];
        encode(Unpooled.wrappedBuffer(b), 0);
        return b;
    }

    /** Size as an unsigned value. */
    public long sizeUnsigned() {
        return Integer.toUnsignedLong(size);
    }

    @Override
    public String toString() {
        return String.format("STag 0x%08x TO 0x%016x size %d", stag, to, sizeUnsigned());
    }
}
