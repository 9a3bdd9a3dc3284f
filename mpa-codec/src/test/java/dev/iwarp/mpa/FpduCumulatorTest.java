package dev.iwarp.mpa;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link FpduCumulator}: long reads are never copied, short ones are, and nothing leaks. */
class FpduCumulatorTest {
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    private final Random rnd = new Random(13);

    private ByteBuf read(byte[] data, int from, int n) {
        return ALLOC.directBuffer(n).writeBytes(data, from, n);
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] a = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), a);
        return a;
    }

    @Test
    void aLongReadBecomesAComponentNotACopy() {
        byte[] data = new byte[3 * FpduCumulator.COMPONENT_MIN];
        rnd.nextBytes(data);
        ByteBuf first = read(data, 0, 100);
        ByteBuf second = read(data, 100, data.length - 100);
        ByteBuf c = FpduCumulator.INSTANCE.cumulate(ALLOC, first, second);
        CompositeByteBuf composite = assertInstanceOf(CompositeByteBuf.class, c);
        assertEquals(2, composite.numComponents());
        // the component is the read's own memory (a copy would have another address)
        assertEquals(second.memoryAddress() + second.readerIndex(), composite.internalComponent(1).memoryAddress());
        assertArrayEquals(data, bytes(c));
        c.release();
        assertEquals(0, first.refCnt());
        assertEquals(0, second.refCnt());
    }

    @Test
    void aShortReadIsCopiedIntoTheRoomLeft() {
        ByteBuf cumulation = ALLOC.directBuffer(1024).writeBytes(new byte[] {1, 2, 3});
        ByteBuf in = ALLOC.directBuffer(2).writeBytes(new byte[] {4, 5});
        ByteBuf c = FpduCumulator.INSTANCE.cumulate(ALLOC, cumulation, in);
        assertSame(cumulation, c);
        assertEquals(0, in.refCnt());
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, bytes(c));
        c.release();
    }

    @Test
    void aCumulationStillSlicedIsNeverWrittenInto() {
        byte[] data = new byte[5000];
        rnd.nextBytes(data);
        ByteBuf cumulation = ALLOC.directBuffer(8192).writeBytes(data, 0, 1000);
        ByteBuf ulpdu = cumulation.retainedSlice(0, 10); // as MpaFramer hands a ULPDU on
        ByteBuf c = FpduCumulator.INSTANCE.cumulate(ALLOC, cumulation, read(data, 1000, 10));
        c = FpduCumulator.INSTANCE.cumulate(ALLOC, c, read(data, 1010, 3990));
        assertArrayEquals(data, bytes(c));
        byte[] head = new byte[10];
        System.arraycopy(data, 0, head, 0, 10);
        assertArrayEquals(head, bytes(ulpdu));
        c.release();
        assertTrue(ulpdu.release());
        assertEquals(0, cumulation.refCnt());
    }

    @Test
    void anOctetAtATimeGrowsByPowersOfTwo() {
        int[] allocations = {0};
        ByteBufAllocator counting = new AbstractByteBufAllocator(false) {
            @Override
            protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
                allocations[0]++;
                return new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
            }

            @Override
            protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
                throw new UnsupportedOperationException();
            }

            @Override
            public boolean isDirectBufferPooled() {
                return false;
            }
        };
        byte[] data = new byte[65536 + 8];
        rnd.nextBytes(data);
        ByteBuf c = read(data, 0, 1);
        for (int i = 1; i < data.length; i++) {
            c = FpduCumulator.INSTANCE.cumulate(counting, c, read(data, i, 1));
        }
        assertArrayEquals(data, bytes(c));
        // one copy per doubling (64 octets up to 128 KiB), not one per octet
        assertTrue(allocations[0] <= 16, allocations[0] + " buffers allocated");
        c.release();
    }

    @Test
    void longAndShortReadsInAnyMixKeepTheStream() {
        byte[] data = new byte[300_000];
        rnd.nextBytes(data);
        ByteBuf c = read(data, 0, 1);
        int consumed = 0;
        int i = 1;
        while (i < data.length) {
            int n = Math.min(data.length - i, 1 + rnd.nextInt(rnd.nextBoolean() ? 100 : 9000));
            c = FpduCumulator.INSTANCE.cumulate(ALLOC, c, read(data, i, n));
            i += n;
            if (rnd.nextInt(4) == 0) { // the decoder takes an FPDU's worth off the front
                int take = rnd.nextInt(c.readableBytes() + 1);
                byte[] expected = java.util.Arrays.copyOfRange(data, consumed, consumed + take);
                assertArrayEquals(expected, bytes(c.readSlice(take)), "at " + consumed);
                consumed += take;
            }
        }
        assertArrayEquals(java.util.Arrays.copyOfRange(data, consumed, data.length), bytes(c));
        c.release();
    }
}
