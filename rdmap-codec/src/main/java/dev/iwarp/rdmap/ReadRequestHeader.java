package dev.iwarp.rdmap;

import io.netty.buffer.ByteBuf;

/**
 * The RDMA Read Request header (RFC 5040 §4.4), the whole payload of a Read Request and the
 * Terminated RDMA Header of a Terminate (RFC 5040 §4.7). Data Sink = the requester's buffer the
 * Read Response targets; Data Source = the responder's buffer that is read.
 *
 * @param sinkStag   Data Sink STag
 * @param sinkTo     Data Sink Tagged Offset
 * @param size       RDMA Read Message Size in octets (unsigned 32 bits)
 * @param sourceStag Data Source STag
 * @param sourceTo   Data Source Tagged Offset
 */
public record ReadRequestHeader(int sinkStag, long sinkTo, long size, int sourceStag, long sourceTo) {
    /** Octets on the wire. */
    public static final int LENGTH = 28;

    public ReadRequestHeader {
        checkSize(size);
    }

    /** Refuses an RDMA Read Message Size that does not fit its 32 unsigned bits. */
    static void checkSize(long size) {
        if (size < 0 || size > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("RDMA Read Message Size is 32 bits unsigned: " + size);
        }
    }

    /** Reads the header at {@code index}, leaving the indices of {@code in} alone. */
    public static ReadRequestHeader decode(ByteBuf in, int index) {
        return new ReadRequestHeader(in.getInt(index), in.getLong(index + 4), in.getUnsignedInt(index + 12),
                in.getInt(index + 16), in.getLong(index + 20));
    }

    /** Writes the 28 octets at the writer index of {@code out}. */
    public void encode(ByteBuf out) {
        encode(out, sinkStag, sinkTo, size, sourceStag, sourceTo);
    }

    /**
     * Writes a header with these fields at the writer index of {@code out}, without a header object;
     * {@code size} was checked ({@link #checkSize}).
     */
    static void encode(ByteBuf out, int sinkStag, long sinkTo, long size, int sourceStag, long sourceTo) {
        out.writeInt(sinkStag);
        out.writeLong(sinkTo);
        out.writeInt((int) size);
        out.writeInt(sourceStag);
        out.writeLong(sourceTo);
    }

    @Override
    public String toString() {
        return String.format("sink STag 0x%08x TO 0x%016x size %d source STag 0x%08x TO 0x%016x",
                sinkStag, sinkTo, size, sourceStag, sourceTo);
    }
}
