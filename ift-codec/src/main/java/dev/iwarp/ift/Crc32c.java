package dev.iwarp.ift;

import io.netty.buffer.ByteBuf;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Feeds {@link ByteBuf} regions to {@link CRC32C} (the JIT intrinsic) without copying: the backing
 * array of heap buffers, the cached internal NIO view of a single-component direct buffer, else its
 * NIO buffers one by one. IFT carries every CRC least-significant octet first (iSCSI's order).
 */
final class Crc32c {
    /** CRC32C over covered octets followed by their correct CRC (least-significant octet first). */
    static final int RESIDUE = 0x48674BC7;

    private Crc32c() {
    }

    /** Adds {@code length} octets of {@code buf} from {@code index} to {@code crc}; indexes unchanged. */
    static void update(CRC32C crc, ByteBuf buf, int index, int length) {
        if (length == 0) {
            return;
        }
        if (buf.hasArray()) {
            crc.update(buf.array(), buf.arrayOffset() + index, length);
        } else if (buf.nioBufferCount() == 1) {
            ByteBuffer nio = buf.internalNioBuffer(index, length);
            crc.update(nio);
        } else {
            for (ByteBuffer nio : buf.nioBuffers(index, length)) {
                crc.update(nio);
            }
        }
    }

    /** The CRC32C value of a region. */
    static int compute(ByteBuf buf, int index, int length) {
        CRC32C crc = new CRC32C();
        update(crc, buf, index, length);
        return (int) crc.getValue();
    }
}
