package dev.iwarp.mpa.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.IllegalReferenceCountException;
import org.junit.jupiter.api.Test;

import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What Netty's {@link ByteBuf} contract asks of {@link FpduCumulation} (and of {@link ReadOnlyViewByteBuf},
 * which it extends) whatever the framer does with it: index bounds, reference counting that reaches its
 * parts, slices and duplicates that share its octets and its count, and a read-only buffer that refuses
 * every write however it is reached.
 */
class FpduCumulationContractTest {
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

    /** Octets 0..9 in two parts: 0..3 and 4..9. */
    private static FpduCumulation twoParts(ByteBuf[] parts) {
        parts[0] = ALLOC.directBuffer(4).writeBytes(new byte[] {0, 1, 2, 3});
        parts[1] = ALLOC.heapBuffer(6).writeBytes(new byte[] {4, 5, 6, 7, 8, 9});
        return new FpduCumulation(ALLOC).add(parts[0]).add(parts[1]);
    }

    @Test
    void indicesStayWithinZeroReaderWriterCapacity() {
        FpduCumulation c = twoParts(new ByteBuf[2]);
        try {
            assertEquals(0, c.readerIndex());
            assertEquals(10, c.writerIndex());
            assertEquals(10, c.capacity());
            assertEquals(0, c.writableBytes());
            assertThrows(IndexOutOfBoundsException.class, () -> c.readerIndex(11));
            assertThrows(IndexOutOfBoundsException.class, () -> c.writerIndex(11));
            assertThrows(IndexOutOfBoundsException.class, () -> c.readerIndex(-1));
            assertThrows(IndexOutOfBoundsException.class, () -> c.getByte(10));
            assertThrows(IndexOutOfBoundsException.class, () -> c.getInt(7));
            assertThrows(IndexOutOfBoundsException.class, () -> c.getByte(-1));
            c.writerIndex(6);
            assertThrows(IndexOutOfBoundsException.class, () -> c.readerIndex(7));
            c.readerIndex(5);
            assertEquals(5, c.readByte());
            assertThrows(IndexOutOfBoundsException.class, c::readShort);
            assertEquals(6, c.readerIndex(), "a refused read moves nothing");
            assertEquals(9, c.getByte(9), "octets past the writer index are still gettable");
        } finally {
            c.release();
        }
    }

    @Test
    void releaseGivesEveryPartBackOnceAndAReleasedBufferRefusesUse() {
        ByteBuf[] parts = new ByteBuf[2];
        FpduCumulation c = twoParts(parts);
        assertEquals(1, c.refCnt());
        c.retain();
        assertEquals(2, c.refCnt());
        assertFalse(c.release());
        assertEquals(1, parts[0].refCnt(), "parts are held until the last reference goes");
        assertTrue(c.release());
        assertEquals(0, c.refCnt());
        assertEquals(0, parts[0].refCnt());
        assertEquals(0, parts[1].refCnt());
        assertThrows(IllegalReferenceCountException.class, () -> c.getByte(0));
        assertThrows(IllegalReferenceCountException.class, c::release);
        assertThrows(IllegalReferenceCountException.class, c::retain);
        assertTrue(c.reusable());
    }

    @Test
    void slicesAndDuplicatesShareOctetsAndCountButNotIndices() {
        FpduCumulation c = twoParts(new ByteBuf[2]);
        ByteBuf slice = c.slice(2, 5);
        assertEquals(5, slice.readableBytes());
        assertEquals(2, slice.getByte(0));
        assertEquals(0x03040506, slice.getInt(1), "a slice reads across the boundary between parts");
        assertEquals(c.refCnt(), slice.refCnt(), "a slice shares its parent's count");
        ByteBuf dup = c.duplicate();
        dup.readerIndex(8);
        assertEquals(0, c.readerIndex(), "a duplicate's indices are its own");
        assertEquals(8, dup.readByte());

        ByteBuf retained = c.retainedSlice(4, 6);
        assertEquals(2, c.refCnt());
        assertFalse(c.release(), "the retained slice keeps the octets alive");
        assertEquals(4, retained.getByte(0));
        assertEquals(9, retained.getByte(5));
        assertTrue(retained.release());
        assertTrue(c.reusable(), "the retained slice's release was the last one");
    }

    @Test
    void everyWriteIsRefusedDirectlyOrThroughAViewAndLeavesTheOctets() {
        FpduCumulation c = twoParts(new ByteBuf[2]);
        try {
            assertTrue(c.isReadOnly());
            assertSame(c, c.asReadOnly());
            assertFalse(c.isWritable(), "its writer index is its capacity: parts are added, never written");
            assertThrows(ReadOnlyBufferException.class, () -> c.setByte(1, 7));
            assertThrows(ReadOnlyBufferException.class, () -> c.setShort(3, 7));
            assertThrows(ReadOnlyBufferException.class, () -> c.setLong(0, 7));
            assertThrows(ReadOnlyBufferException.class, () -> c.setBytes(0, new byte[] {7}));
            assertThrows(ReadOnlyBufferException.class, () -> c.writeByte(7));
            assertThrows(ReadOnlyBufferException.class, () -> c.slice(0, 4).setByte(0, 7));
            assertThrows(ReadOnlyBufferException.class, () -> c.duplicate().setInt(2, 7));
            assertThrows(ReadOnlyBufferException.class, () -> c.capacity(20));
            assertTrue(c.slice().isReadOnly());
            for (int i = 0; i < 10; i++) {
                assertEquals(i, c.getByte(i));
            }
            assertEquals(10, c.writerIndex());
        } finally {
            c.release();
        }
    }

    @Test
    void itIsABigEndianViewWithNoArrayAddressOrParent() {
        FpduCumulation c = twoParts(new ByteBuf[2]);
        try {
            assertEquals(ByteOrder.BIG_ENDIAN, c.order());
            assertEquals(0x00010203, c.getInt(0));
            assertEquals(0x03020100, c.getIntLE(0));
            assertNull(c.unwrap());
            assertFalse(c.hasArray());
            assertThrows(UnsupportedOperationException.class, c::array);
            assertThrows(UnsupportedOperationException.class, c::arrayOffset);
            assertFalse(c.hasMemoryAddress());
            assertThrows(UnsupportedOperationException.class, c::memoryAddress);
            assertSame(ALLOC, c.alloc());
        } finally {
            c.release();
        }
    }
}
