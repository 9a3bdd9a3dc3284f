package dev.iwarp.rdmap;

import io.netty.buffer.ByteBuf;

/**
 * The payload of Immediate Data and Immediate Data with SE (RFC 7306): 8 octets,
 * opaque to RDMAP.
 *
 * @param value the 64 bits, big-endian on the wire
 */
public record ImmediateData(long value) {
    /** Octets on the wire. */
    public static final int LENGTH = 8;

    /** Reads the 8 octets at {@code index}, leaving the indices of {@code in} alone. */
    public static ImmediateData decode(ByteBuf in, int index) {
        return new ImmediateData(in.getLong(index));
    }

    /** Writes the 8 octets at the writer index of {@code out}. */
    public void encode(ByteBuf out) {
        out.writeLong(value);
    }

    @Override
    public String toString() {
        return String.format("immediate 0x%016x", value);
    }
}
