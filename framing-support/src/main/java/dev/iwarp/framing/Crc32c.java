package dev.iwarp.framing;

import io.netty.buffer.ByteBuf;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Feeds {@link ByteBuf} regions to {@link java.util.zip.CRC32C} (the JIT intrinsic) without copying
 * and, for heap and plain pooled buffers, without allocating: the backing array of a heap buffer, the
 * cached internal NIO view of a single-component direct buffer, else its NIO buffers one by one.
 * MPA (RFC 5044 §4.4) and IFT both carry the value least-significant octet first on the wire, as
 * iSCSI does: write it with {@code writeIntLE}.
 */
public final class Crc32c {
    /** CRC32C over covered octets followed by their own correct CRC (little-endian) yields this (RFC 3720 Appendix B.4). */
    public static final int RESIDUE = 0x48674BC7;

    private Crc32c() {
    }

    /** Adds {@code length} octets of {@code buf} starting at {@code index} to {@code crc}; indexes unchanged. */
    public static void update(CRC32C crc, ByteBuf buf, int index, int length) {
        if (length == 0) {
            return;
        }
        if (buf.hasArray()) {
            crc.update(buf.array(), buf.arrayOffset() + index, length);
        } else if (buf.nioBufferCount() == 1) {
            // internalNioBuffer is a cached view for pooled buffers: no garbage per call.
            ByteBuffer nio = buf.internalNioBuffer(index, length);
            crc.update(nio);
        } else {
            for (ByteBuffer nio : buf.nioBuffers(index, length)) {
                crc.update(nio);
            }
        }
    }

    /** The standard CRC32C value of a region. */
    public static int compute(ByteBuf buf, int index, int length) {
        CRC32C crc = new CRC32C();
        update(crc, buf, index, length);
        return (int) crc.getValue();
    }
}
