package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static dev.iwarp.ddp.AccessFlags.REMOTE_READ;
import static dev.iwarp.ddp.AccessFlags.REMOTE_WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A stream's reused slices of registered memory (RFC 5041 §5.1 placement into a tagged buffer, §5.2 payloads
 * sent from one): each behaves as a retained slice (the region stays alive while it is held, nothing outside its
 * range is touched) and, once released, is pointed at the next range instead of a new object being made.
 */
class RegionViewsTest {
    private final TaggedBufferTable table = new TaggedBufferTable();
    private final RegionViews views = new RegionViews();
    private final ByteBuf region = Unpooled.directBuffer(1024, 1024).writeZero(1024);

    @AfterEach
    void release() {
        if (region.refCnt() > 0) {
            region.release();
        }
    }

    private TaggedBuffer register() {
        return table.register(new Object(), region, 0x1000, REMOTE_WRITE | REMOTE_READ, false);
    }

    @Test
    void aViewIsTheRegionsOwnOctetsAndOnlyItsRange() {
        TaggedBuffer b = register();
        ByteBuf v = b.view(100, 8, views);
        assertEquals(0, v.readerIndex());
        assertEquals(0, v.writerIndex());
        assertEquals(8, v.capacity());
        assertEquals(8, v.maxCapacity());
        assertEquals(region.memoryAddress() + 100, v.memoryAddress(), "the region's memory itself");
        v.writeLong(0x0102030405060708L);
        assertThrows(IndexOutOfBoundsException.class, () -> v.writeByte(9), "past the range");
        assertThrows(IndexOutOfBoundsException.class, () -> v.setByte(8, 9));
        assertThrows(IndexOutOfBoundsException.class, () -> v.setBytes(4, new byte[8]));
        assertThrows(UnsupportedOperationException.class, () -> v.capacity(16));
        assertEquals(0x0102030405060708L, region.getLong(100));
        assertEquals(0, region.getByte(99));
        assertEquals(0, region.getByte(108));
        v.release();
        table.deregister(b.stag());
    }

    @Test
    void aReleasedViewIsPointedAtTheNextRange() {
        TaggedBuffer b = register();
        ByteBuf first = b.view(0, 16, views);
        ByteBuf busy = b.view(16, 16, views);
        assertNotSame(first, busy, "a view in use is never handed out again");
        first.release();
        ByteBuf again = b.view(32, 16, views);
        assertSame(first, again, "the released view, pointed at the new range");
        again.writeInt(7);
        assertEquals(7, region.getInt(32));
        again.release();
        busy.release();
        assertEquals(2, views.made());
        table.deregister(b.stag());
    }

    @Test
    void theRegionStaysAliveWhileAViewIsHeld() {
        TaggedBuffer b = register();
        ByteBuf v = b.read(0x1000 + 8, 8, views);
        table.deregister(b.stag());
        region.release(); // the registrant's own reference
        assertEquals(1, region.refCnt(), "the view's reference keeps the memory");
        assertEquals(8, v.readableBytes());
        v.release();
        assertEquals(0, region.refCnt(), "the view's last release releases the memory");
        assertThrows(IllegalReferenceCountException.class, v::retain, "a released view is not usable");
    }

    @Test
    void segmentsOfAViewComeFromThePoolAndHoldTheMemory() {
        ByteBuf message = views.slice(region, 256, 64);
        ByteBuf segment = message.retainedSlice(16, 16);
        message.release();
        assertEquals(region.memoryAddress() + 256 + 16, segment.memoryAddress());
        assertEquals(2, region.refCnt(), "the segment holds the memory");
        segment.release();
        assertEquals(1, region.refCnt());
        assertEquals(2, views.made());
        ByteBuf next = views.slice(region, 0, 8);
        next.release();
        assertEquals(2, views.made(), "reused");
    }

    @Test
    void aViewReleasedOnAnotherThreadIsNotReused() throws InterruptedException {
        ByteBuf v = views.slice(region, 0, 8);
        Thread t = new Thread(v::release);
        t.start();
        t.join();
        assertEquals(1, region.refCnt(), "released: its memory reference too");
        ByteBuf next = views.slice(region, 0, 8);
        assertNotSame(v, next, "the pool is the event loop's alone");
        next.release();
    }

    @Test
    void aRangeOutsideTheMemoryIsRefused() {
        assertThrows(IndexOutOfBoundsException.class, () -> views.slice(region, 1020, 8));
        assertThrows(IndexOutOfBoundsException.class, () -> views.slice(region, -1, 8));
        assertEquals(1, region.refCnt(), "nothing retained");
    }

    @Test
    void viewsOnceWarmAllocateNothing() {
        // the paranoid leak detector records every access of a tracked buffer: off for this region
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        ByteBuf memory = Unpooled.directBuffer(1024, 1024).writeZero(1024);
        try {
            viewsOnceWarmAllocateNothing(table.register(new Object(), memory, 0, REMOTE_WRITE, false));
        } finally {
            memory.release();
            ResourceLeakDetector.setLevel(level);
        }
    }

    private void viewsOnceWarmAllocateNothing(TaggedBuffer b) {
        for (int i = 0; i < 20_000; i++) { // warm-up: the figure below is steady state
            b.view(i & 511, 256, views).release();
        }
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        // the least of three rounds: a round the JIT recompiles in (2,488 octets once, on a busy machine) is not the
        // steady state; a slice per view would cost every round 400,000
        long octets = Long.MAX_VALUE;
        for (int round = 0; round < 3 && octets >= 1024; round++) {
            long before = threads.getThreadAllocatedBytes(tid);
            for (int i = 0; i < 10_000; i++) {
                ByteBuf v = b.view(i & 511, 256, views);
                v.writeByte(i);
                v.release();
            }
            octets = Math.min(octets, threads.getThreadAllocatedBytes(tid) - before);
        }
        assertTrue(octets < 1024, octets + " octets allocated for 10,000 views (a slice each is 400,000)");
        table.deregister(b.stag());
    }

    /**
     * What a deep pipeline leaves behind is bounded: after 200 slices were held at once and released, the pool keeps
     * {@link RegionViews#MAX_KEPT} of them, and the next 200 make the rest anew.
     */
    @Test
    void aDeepBurstLeavesAtMostMaxKeptSlicesInThePool() {
        int n = 200;
        ByteBuf[] held = new ByteBuf[n];
        for (int i = 0; i < n; i++) {
            held[i] = views.slice(region, i, 1);
        }
        for (ByteBuf b : held) {
            b.release();
        }
        assertEquals(n, views.made());
        for (int i = 0; i < n; i++) {
            held[i] = views.slice(region, i, 1);
        }
        for (ByteBuf b : held) {
            b.release();
        }
        assertEquals(n + (n - RegionViews.MAX_KEPT), views.made(), "kept " + RegionViews.MAX_KEPT + ", made the rest");
    }
}
