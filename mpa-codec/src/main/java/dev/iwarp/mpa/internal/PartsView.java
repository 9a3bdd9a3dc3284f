package dev.iwarp.mpa.internal;

import io.netty.buffer.ByteBuf;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.GatheringByteChannel;
import java.util.Arrays;

/**
 * A read-only view of the readable octets of several buffers (its parts), in order, for {@link FpduCumulation}:
 * where each part starts, which part holds an octet, and every read, which takes from each part it spans in
 * turn. Adding and giving back parts is the subclass's.
 */
public abstract class PartsView extends ReadOnlyViewByteBuf {
    ByteBuf[] parts = new ByteBuf[4];
    /** Index in each part's buffer where its octets start. */
    int[] partIndex = new int[4];
    /** Index in this buffer where each part starts; {@code partStart[count]} is the capacity. */
    int[] partStart = new int[5];
    int count;
    /** The part the last lookup found (headers are read octet by octet from one part). */
    int last;

    protected PartsView(int maxCapacity) {
        super(maxCapacity);
    }

    /** Number of parts. */
    public int parts() {
        return count;
    }

    public ByteBuf part(int k) {
        return parts[k];
    }

    /** Index in part {@code k}'s own buffer where its octets start. */
    public int partIndex(int k) {
        return partIndex[k];
    }

    /** Index in this buffer where part {@code k} starts ({@code k == parts()}: the capacity). */
    public int partStart(int k) {
        return partStart[k];
    }

    /** The part holding octet {@code index} ({@code 0 <= index < capacity()}). */
    public int partOf(int index) {
        int k = last;
        if (k < count && index >= partStart[k] && index < partStart[k + 1]) {
            return k;
        }
        int lo = 0;
        int hi = count - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (index < partStart[mid]) {
                hi = mid - 1;
            } else if (index >= partStart[mid + 1]) {
                lo = mid + 1;
            } else {
                last = mid;
                return mid;
            }
        }
        throw new IndexOutOfBoundsException("index " + index + " of " + this);
    }

    private int local(int k, int index) {
        return partIndex[k] + index - partStart[k];
    }

    @Override
    protected byte _getByte(int index) {
        int k = partOf(index);
        return parts[k].getByte(local(k, index));
    }

    @Override
    protected short _getShort(int index) {
        int k = partOf(index);
        if (index + 2 <= partStart[k + 1]) {
            return parts[k].getShort(local(k, index));
        }
        return (short) ((_getByte(index) & 0xFF) << 8 | _getByte(index + 1) & 0xFF);
    }

    @Override
    protected short _getShortLE(int index) {
        int k = partOf(index);
        if (index + 2 <= partStart[k + 1]) {
            return parts[k].getShortLE(local(k, index));
        }
        return (short) (_getByte(index) & 0xFF | (_getByte(index + 1) & 0xFF) << 8);
    }

    @Override
    protected int _getUnsignedMedium(int index) {
        int k = partOf(index);
        if (index + 3 <= partStart[k + 1]) {
            return parts[k].getUnsignedMedium(local(k, index));
        }
        return (_getShort(index) & 0xFFFF) << 8 | _getByte(index + 2) & 0xFF;
    }

    @Override
    protected int _getUnsignedMediumLE(int index) {
        int k = partOf(index);
        if (index + 3 <= partStart[k + 1]) {
            return parts[k].getUnsignedMediumLE(local(k, index));
        }
        return _getShortLE(index) & 0xFFFF | (_getByte(index + 2) & 0xFF) << 16;
    }

    @Override
    protected int _getInt(int index) {
        int k = partOf(index);
        if (index + 4 <= partStart[k + 1]) {
            return parts[k].getInt(local(k, index));
        }
        return (_getShort(index) & 0xFFFF) << 16 | _getShort(index + 2) & 0xFFFF;
    }

    @Override
    protected int _getIntLE(int index) {
        int k = partOf(index);
        if (index + 4 <= partStart[k + 1]) {
            return parts[k].getIntLE(local(k, index));
        }
        return _getShortLE(index) & 0xFFFF | (_getShortLE(index + 2) & 0xFFFF) << 16;
    }

    @Override
    protected long _getLong(int index) {
        int k = partOf(index);
        if (index + 8 <= partStart[k + 1]) {
            return parts[k].getLong(local(k, index));
        }
        return (_getInt(index) & 0xFFFFFFFFL) << 32 | _getInt(index + 4) & 0xFFFFFFFFL;
    }

    @Override
    protected long _getLongLE(int index) {
        int k = partOf(index);
        if (index + 8 <= partStart[k + 1]) {
            return parts[k].getLongLE(local(k, index));
        }
        return _getIntLE(index) & 0xFFFFFFFFL | (_getIntLE(index + 4) & 0xFFFFFFFFL) << 32;
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int length) {
        checkDstIndex(index, length, dstIndex, dst.capacity());
        while (length > 0) {
            int k = partOf(index);
            int n = Math.min(length, partStart[k + 1] - index);
            parts[k].getBytes(local(k, index), dst, dstIndex, n);
            index += n;
            dstIndex += n;
            length -= n;
        }
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, byte[] dst, int dstIndex, int length) {
        checkDstIndex(index, length, dstIndex, dst.length);
        while (length > 0) {
            int k = partOf(index);
            int n = Math.min(length, partStart[k + 1] - index);
            parts[k].getBytes(local(k, index), dst, dstIndex, n);
            index += n;
            dstIndex += n;
            length -= n;
        }
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuffer dst) {
        int length = dst.remaining();
        checkIndex(index, length);
        int limit = dst.limit();
        try {
            while (length > 0) {
                int k = partOf(index);
                int n = Math.min(length, partStart[k + 1] - index);
                dst.limit(dst.position() + n);
                parts[k].getBytes(local(k, index), dst);
                index += n;
                length -= n;
            }
        } finally {
            dst.limit(limit);
        }
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, OutputStream out, int length) throws IOException {
        checkIndex(index, length);
        while (length > 0) {
            int k = partOf(index);
            int n = Math.min(length, partStart[k + 1] - index);
            parts[k].getBytes(local(k, index), out, n);
            index += n;
            length -= n;
        }
        return this;
    }

    @Override
    public int getBytes(int index, GatheringByteChannel out, int length) throws IOException {
        return length == 0 ? 0 : (int) out.write(nioBuffers(index, length));
    }

    @Override
    public int getBytes(int index, FileChannel out, long position, int length) throws IOException {
        long written = 0;
        for (ByteBuffer b : nioBuffers(index, length)) {
            while (b.hasRemaining()) {
                written += out.write(b, position + written);
            }
        }
        return (int) written;
    }

    @Override
    public int nioBufferCount() {
        int n = 0;
        for (int k = 0; k < count; k++) {
            n += parts[k].nioBufferCount();
        }
        return n;
    }

    @Override
    public ByteBuffer nioBuffer(int index, int length) {
        checkIndex(index, length);
        if (length > 0) {
            int k = partOf(index);
            if (index + length <= partStart[k + 1]) {
                return parts[k].nioBuffer(local(k, index), length);
            }
        }
        ByteBuffer merged = ByteBuffer.allocate(length);
        getBytes(index, merged);
        return merged.clear();
    }

    @Override
    public ByteBuffer internalNioBuffer(int index, int length) {
        checkIndex(index, length);
        if (length > 0) {
            int k = partOf(index);
            if (index + length <= partStart[k + 1]) {
                return parts[k].internalNioBuffer(local(k, index), length);
            }
        }
        throw new UnsupportedOperationException("octets " + index + "+" + length + " span reads");
    }

    @Override
    public ByteBuffer[] nioBuffers(int index, int length) {
        checkIndex(index, length);
        if (length == 0) {
            return new ByteBuffer[] {ByteBuffer.allocate(0)};
        }
        ByteBuffer[] out = new ByteBuffer[0];
        while (length > 0) {
            int k = partOf(index);
            int n = Math.min(length, partStart[k + 1] - index);
            ByteBuffer[] more = parts[k].nioBuffers(local(k, index), n);
            int at = out.length;
            out = Arrays.copyOf(out, at + more.length);
            System.arraycopy(more, 0, out, at, more.length);
            index += n;
            length -= n;
        }
        return out;
    }

    @Override
    public int capacity() {
        return partStart[count];
    }

    @Override
    public boolean isDirect() {
        for (int k = 0; k < count; k++) {
            if (!parts[k].isDirect()) {
                return false;
            }
        }
        return count > 0;
    }
}
