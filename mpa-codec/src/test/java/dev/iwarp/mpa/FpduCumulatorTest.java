package dev.iwarp.mpa;

import dev.iwarp.mpa.internal.FpduCumulation;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
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
    private final FpduCumulator cumulator = new FpduCumulator();

    private ByteBuf read(byte[] data, int from, int n) {
        return ALLOC.directBuffer(n).writeBytes(data, from, n);
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] a = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), a);
        return a;
    }

    @Test
    void aLongReadBecomesAPartNotACopy() {
        byte[] data = new byte[3 * FpduCumulator.COMPONENT_MIN];
        rnd.nextBytes(data);
        ByteBuf first = read(data, 0, 100);
        ByteBuf second = read(data, 100, data.length - 100);
        ByteBuf c = cumulator.cumulate(ALLOC, first, second);
        FpduCumulation parts = assertInstanceOf(FpduCumulation.class, c);
        assertEquals(2, parts.parts());
        // the part is the read itself (a copy would be another buffer)
        assertSame(first, parts.part(0));
        assertSame(second, parts.part(1));
        assertArrayEquals(data, bytes(c));
        c.release();
        assertEquals(0, first.refCnt());
        assertEquals(0, second.refCnt());
    }

    @Test
    void aShortReadIsCopiedIntoTheRoomLeft() {
        ByteBuf cumulation = ALLOC.directBuffer(1024).writeBytes(new byte[] {1, 2, 3});
        ByteBuf in = ALLOC.directBuffer(2).writeBytes(new byte[] {4, 5});
        ByteBuf c = cumulator.cumulate(ALLOC, cumulation, in);
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
        ByteBuf c = cumulator.cumulate(ALLOC, cumulation, read(data, 1000, 10));
        c = cumulator.cumulate(ALLOC, c, read(data, 1010, 3990));
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
            c = cumulator.cumulate(counting, c, read(data, i, 1));
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
            c = cumulator.cumulate(ALLOC, c, read(data, i, n));
            i += n;
            if (rnd.nextInt(4) == 0) { // the decoder takes an FPDU's worth off the front
                int take = rnd.nextInt(c.readableBytes() + 1);
                byte[] expected = java.util.Arrays.copyOfRange(data, consumed, consumed + take);
                assertArrayEquals(expected, bytes(c.readSlice(take)), "at " + consumed);
                consumed += take;
            }
            if (rnd.nextInt(8) == 0) { // as ByteToMessageDecoder does every 16 reads
                c.discardSomeReadBytes();
            }
        }
        assertArrayEquals(java.util.Arrays.copyOfRange(data, consumed, data.length), bytes(c));
        c.release();
    }

    /** Straddle after straddle, as a bulk transfer's reads: one cumulation buffer, taken again, nothing allocated. */
    @Test
    void eachStraddleTakesTheSameCumulationAgainAndAllocatesNothing() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        byte[] data = new byte[65536];
        rnd.nextBytes(data);
        int rounds = 2_000;
        ByteBuf[] tails = new ByteBuf[rounds];
        ByteBuf[] reads = new ByteBuf[rounds];
        // no leak-detection wrapper: this measures the cumulator, not the detector's records
        for (int i = 0; i < rounds; i++) {
            tails[i] = new io.netty.buffer.UnpooledUnsafeDirectByteBuf(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, 700, 700)
                    .writeBytes(data, 0, 700);
            reads[i] = new io.netty.buffer.UnpooledUnsafeDirectByteBuf(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, 60000, 60000)
                    .writeBytes(data, 700, 60000);
        }
        for (int i = 1; i < rounds; i++) { // freeing their memory is not the cumulator's allocation
            tails[i].retain();
            reads[i].retain();
        }
        ByteBuf first = cumulator.cumulate(ALLOC, tails[0], reads[0]);
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 0, 60700), bytes(first));
        first.skipBytes(first.readableBytes()); // the decoder read it all
        assertTrue(first.release());
        long before = 0;
        for (int i = 1; i < rounds; i++) {
            if (i == rounds / 2) { // the first half warms up (class loading, the interpreter)
                before = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
            }
            ByteBuf c = cumulator.cumulate(ALLOC, tails[i], reads[i]);
            assertSame(first, c);
            c.skipBytes(c.readableBytes());
            c.release();
        }
        long allocated = threads.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
        // a composite per straddle was about 250 B (composite, its array, two components)
        assertTrue(allocated < 2 * rounds, allocated + " octets allocated for " + rounds / 2 + " straddles");
        for (int i = 1; i < rounds; i++) {
            assertEquals(1, tails[i].refCnt(), "the cumulation gave back its reference");
            assertEquals(1, reads[i].refCnt(), "the cumulation gave back its reference");
            tails[i].release();
            reads[i].release();
        }
        assertEquals(0, tails[0].refCnt());
        assertEquals(0, reads[0].refCnt());
    }

    /** A slice of a lent ULPDU still held keeps its cumulation intact: the next straddle gets another one. */
    @Test
    void aCumulationStillHeldIsNotTakenAgain() {
        byte[] data = new byte[20_000];
        rnd.nextBytes(data);
        ByteBuf c = cumulator.cumulate(ALLOC, read(data, 0, 10), read(data, 10, 9990));
        ByteBuf held = c.retainedSlice(5, 9000); // as an upper layer keeps part of a lent ULPDU
        c.skipBytes(c.readableBytes());
        c.release();
        ByteBuf next = cumulator.cumulate(ALLOC, read(data, 10_000, 10), read(data, 10_010, 9990));
        assertTrue(next != c, "the held cumulation was taken again");
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 5, 9005), bytes(held));
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 10_000, 20_000), bytes(next));
        // a short read after a straddle still held is copied, never appended to the held parts
        ByteBuf held2 = next.retainedSlice(0, 100);
        ByteBuf merged = cumulator.cumulate(ALLOC, next, read(data, 0, 50));
        assertTrue(merged != next);
        assertEquals(10_050, merged.readableBytes());
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 10_000, 10_100), bytes(held2));
        assertTrue(held.release());
        assertTrue(held2.release());
        assertEquals(0, c.refCnt());
        assertEquals(0, next.refCnt());
        merged.release();
    }
}
