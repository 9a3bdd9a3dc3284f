package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Writes a DDP header (RFC 5041 §4.2: 14 octets tagged; §4.3: 18 untagged) into a buffer with a backing array
 * (the transmitter's reused header buffer) in one pass: one accessibility check for the header (taking the
 * array), not one per field written, as a {@code writeByte}/{@code writeInt} per field costs. Network byte
 * order (RFC 5041 §4). Other buffers are written field by field by the callers.
 */
final class HeaderOctets {
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private HeaderOctets() {
    }

    /** Whether {@code out} takes a header of {@code length} octets through its array. */
    static boolean fits(ByteBuf out, int length) {
        return out.hasArray() && out.writableBytes() >= length;
    }

    /** The tagged header (control octet, RsvdULP, STag, TO); {@code out} {@link #fits} it. */
    static void tagged(ByteBuf out, int control, int rsvdUlp, int stag, long to) {
        int w = out.writerIndex();
        byte[] a = out.array();
        int i = out.arrayOffset() + w;
        a[i] = (byte) control;
        a[i + 1] = (byte) rsvdUlp;
        INT.set(a, i + 2, stag);
        LONG.set(a, i + 6, to);
        out.writerIndex(w + DdpTaggedSegment.HEADER_LENGTH);
    }

    /** The untagged header (control octet, RsvdULP, RsvdULP2, QN, MSN, MO); {@code out} {@link #fits} it. */
    static void untagged(ByteBuf out, int control, int rsvdUlp, int rsvdUlp2, int qn, int msn, int mo) {
        int w = out.writerIndex();
        byte[] a = out.array();
        int i = out.arrayOffset() + w;
        a[i] = (byte) control;
        a[i + 1] = (byte) rsvdUlp;
        INT.set(a, i + 2, rsvdUlp2);
        INT.set(a, i + 6, qn);
        INT.set(a, i + 10, msn);
        INT.set(a, i + 14, mo);
        out.writerIndex(w + DdpUntaggedSegment.HEADER_LENGTH);
    }
}
