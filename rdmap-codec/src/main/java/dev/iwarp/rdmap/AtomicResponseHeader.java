package dev.iwarp.rdmap;

import io.netty.buffer.ByteBuf;

/**
 * The Atomic Response header (RFC 7306), the whole payload of an Atomic Response
 * (untagged, QN 3).
 *
 * @param requestId     Original Request Identifier of the Atomic Request answered
 * @param originalValue Original Remote Data Value: the 64 bits before the operation
 */
public record AtomicResponseHeader(int requestId, long originalValue) {
    /** Octets on the wire. */
    public static final int LENGTH = 12;

    /** Reads the header at {@code index}, leaving the indices of {@code in} alone. */
    public static AtomicResponseHeader decode(ByteBuf in, int index) {
        return new AtomicResponseHeader(in.getInt(index), in.getLong(index + 4));
    }

    /** Writes the 12 octets at the writer index of {@code out}. */
    public void encode(ByteBuf out) {
        out.writeInt(requestId);
        out.writeLong(originalValue);
    }

    @Override
    public String toString() {
        return String.format("request id %d original 0x%016x", Integer.toUnsignedLong(requestId), originalValue);
    }
}
