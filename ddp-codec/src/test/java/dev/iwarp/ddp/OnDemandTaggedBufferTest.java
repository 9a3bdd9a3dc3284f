package dev.iwarp.ddp;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static dev.iwarp.ddp.AccessFlags.LOCAL_WRITE;
import static dev.iwarp.ddp.AccessFlags.REMOTE_READ;
import static dev.iwarp.ddp.AccessFlags.REMOTE_WRITE;
import static dev.iwarp.ddp.TaggedAccessResult.BASE_OR_BOUNDS;
import static dev.iwarp.ddp.TaggedAccessResult.OK;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * On-demand tagged buffers ({@link TaggedBufferTable#registerOnDemand}): no memory until first use, zeros where
 * nothing was placed (never the allocator's old contents), bounds as any region, memory back at discard and at
 * deregistration.
 */
class OnDemandTaggedBufferTest {
    static final Object PD = new Object();
    static final long BASE = 0x00007f0000001000L;
    static final int LENGTH = 4096;

    /** Hands out direct buffers full of 0xA5 (an allocator's stale memory) and keeps them to check releases. */
    static final class DirtyAllocator extends AbstractByteBufAllocator {
        final List<ByteBuf> given = new ArrayList<>();

        DirtyAllocator() {
            super(true);
        }

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            throw new AssertionError("on-demand memory is direct");
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            ByteBuf b = Unpooled.directBuffer(initialCapacity, maxCapacity);
            for (int i = 0; i < initialCapacity; i++) {
                b.setByte(i, 0xA5);
            }
            given.add(b);
            return b;
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }

        /** Buffers handed out and not yet released. */
        long live() {
            return given.stream().filter(b -> b.refCnt() > 0).count();
        }
    }

    final TaggedBufferTable table = new TaggedBufferTable(new Random(7));
    final DirtyAllocator alloc = new DirtyAllocator();

    TaggedBuffer register() {
        return table.registerOnDemand(PD, LENGTH, alloc, BASE, LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ, false);
    }

    @Test
    void registeredWithoutMemoryAndCheckedLikeAnyRegion() {
        TaggedBuffer b = register();
        assertTrue(b.isOnDemand());
        assertFalse(b.isAllocated());
        assertEquals(LENGTH, b.length());
        assertEquals(OK, table.check(b.stag(), PD, BASE + LENGTH - 1, 1, REMOTE_WRITE));
        assertEquals(BASE_OR_BOUNDS, table.check(b.stag(), PD, BASE + LENGTH, 1, REMOTE_WRITE));
        assertEquals(0, alloc.given.size(), "checks allocate nothing");
        assertTrue(table.deregister(b.stag()));
        assertEquals(0, alloc.given.size(), "never used, never allocated");
    }

    @Test
    void placementAtTheLastOctetAllocatesZeroedMemory() {
        TaggedBuffer b = register();
        ByteBuf one = Unpooled.wrappedBuffer(new byte[] {0x42});
        b.place(BASE + LENGTH - 1, one);
        assertTrue(b.isAllocated());
        assertEquals(1, alloc.given.size());
        byte[] expected = new byte[LENGTH];
        expected[LENGTH - 1] = 0x42;
        assertArrayEquals(expected, ByteBufUtil.getBytes(b.memory()), "zeros around the placed octet, not 0xA5");
        assertEquals(0, one.readerIndex(), "the caller's indices are left alone");
        table.deregister(b.stag());
        assertEquals(0, alloc.live(), "released at deregistration");
        assertFalse(b.isAllocated());
    }

    /**
     * A payload can be read straight into on-demand memory once it exists (the first placement allocates it and
     * charges the budget); before that, and after deregistration, there is no view and placement copies.
     */
    @Test
    void aViewOnceTheMemoryExistsNoneBeforeOrAfter() {
        TaggedBuffer b = register();
        assertEquals(null, b.view(0, 16), "no memory yet: no view, and asking allocates nothing");
        assertEquals(0, alloc.given.size());
        b.place(BASE, Unpooled.wrappedBuffer(new byte[] {1}));
        ByteBuf v = b.view(8, 4);
        assertTrue(v != null && v.isDirect());
        assertEquals(0, v.writerIndex());
        v.writeInt(0x01020304);
        v.release();
        assertEquals(0x01020304, b.memory().getInt(8), "written through the view, into the region");
        table.deregister(b.stag());
        assertEquals(null, b.view(0, 16), "deregistered: no view");
        assertEquals(0, alloc.live(), "the view's reference was returned: memory released at deregistration");
    }

    @Test
    void placementOutsideThrowsAndAllocatesNothing() {
        TaggedBuffer b = register();
        assertThrows(IndexOutOfBoundsException.class, () -> b.place(BASE + LENGTH, Unpooled.wrappedBuffer(new byte[1])));
        assertThrows(IndexOutOfBoundsException.class, () -> b.place(BASE - 1, Unpooled.wrappedBuffer(new byte[1])));
        assertThrows(IndexOutOfBoundsException.class, () -> b.read(BASE + 1, LENGTH));
        assertFalse(b.isAllocated());
        table.deregister(b.stag());
    }

    @Test
    void readOfAnUntouchedRegionGivesZeros() {
        TaggedBuffer b = register();
        ByteBuf r = b.read(BASE, LENGTH);
        try {
            assertArrayEquals(new byte[LENGTH], ByteBufUtil.getBytes(r));
        } finally {
            r.release();
        }
        table.deregister(b.stag());
        assertEquals(0, alloc.live());
    }

    @Test
    void aReadSliceOutlivesDeregistration() {
        TaggedBuffer b = register();
        b.place(BASE, Unpooled.wrappedBuffer(new byte[] {1, 2, 3}));
        ByteBuf r = b.read(BASE, 3);
        table.deregister(b.stag());
        assertEquals(1, alloc.live(), "the Read Response still holds its octets");
        assertArrayEquals(new byte[] {1, 2, 3}, ByteBufUtil.getBytes(r));
        r.release();
        assertEquals(0, alloc.live());
    }

    @Test
    void discardGivesMemoryBackAndTheOctetsReadAsZerosAgain() {
        TaggedBuffer b = register();
        b.place(BASE + 100, Unpooled.wrappedBuffer(new byte[] {9, 9}));
        b.discard();
        assertFalse(b.isAllocated());
        assertEquals(0, alloc.live());
        assertEquals(0, b.memory().getByte(100), "new memory, zeroed");
        assertEquals(1, alloc.live());
        table.deregister(b.stag());
        assertEquals(0, alloc.live());
    }

    @Test
    void afterDeregistrationNothingIsAllocatedAgain() {
        TaggedBuffer b = register();
        table.deregister(b.stag());
        assertThrows(IllegalStateException.class, b::memory);
        assertThrows(IllegalStateException.class, () -> b.placeAt(0, Unpooled.wrappedBuffer(new byte[1]), 0, 1));
        assertEquals(0, alloc.given.size());
    }

    /**
     * Placement on one thread, discard on another: every placement lands in memory that is still its own (a write
     * after release would throw IllegalReferenceCountException, or corrupt what the pool gave someone else).
     */
    @Test
    void placementAndDiscardOnTwoThreadsNeverTouchReleasedMemory() throws Exception {
        TaggedBuffer b = table.registerOnDemand(PD, LENGTH, UnpooledByteBufAllocator.DEFAULT, BASE,
                REMOTE_WRITE | REMOTE_READ, false);
        ByteBuf src = Unpooled.wrappedBuffer(new byte[LENGTH]);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicBoolean done = new AtomicBoolean();
        Thread discarder = new Thread(() -> {
            try {
                while (!done.get()) {
                    b.discard();
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        discarder.start();
        try {
            for (int i = 0; i < 20_000; i++) {
                b.place(BASE, src);
                ByteBuf r = b.read(BASE + LENGTH - 8, 8);
                r.getLong(0); // the slice holds its own reference, discard or not
                r.release();
            }
        } finally {
            done.set(true);
            discarder.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        table.deregister(b.stag());
        assertFalse(b.isAllocated());
    }

    @Test
    void aPostedReceiveAllocatesOnlyWhenSomethingIsPlaced() {
        TaggedBuffer b = register();
        UntaggedReceiveQueue<String> queue = new UntaggedReceiveQueue<>(0);
        queue.post(b, LENGTH - 8, 8, "first");
        queue.post(b, LENGTH - 8, 8, "second");
        assertThrows(IndexOutOfBoundsException.class, () -> queue.post(b, LENGTH - 7, 8, "past the end"));
        assertFalse(b.isAllocated(), "waiting receives hold no memory");

        DdpUntaggedSegment empty = new DdpUntaggedSegment(true, 0x43, 0, 0, 1, 0, Unpooled.EMPTY_BUFFER);
        assertTrue(queue.place(empty).isDelivered());
        assertFalse(b.isAllocated(), "an empty message places nothing");

        DdpUntaggedSegment s = new DdpUntaggedSegment(true, 0x43, 0, 0, 2, 0,
                Unpooled.wrappedBuffer(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}));
        UntaggedPlacementResult<String> p = queue.place(s);
        s.release();
        assertTrue(p.isDelivered());
        assertEquals("second", p.context());
        byte[] expected = new byte[LENGTH];
        for (int i = 0; i < 8; i++) {
            expected[LENGTH - 8 + i] = (byte) (i + 1);
        }
        assertArrayEquals(expected, ByteBufUtil.getBytes(b.memory()));
        table.deregister(b.stag());
        assertEquals(0, alloc.live());
    }
}
