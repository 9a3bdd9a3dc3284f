package dev.iwarp.mpa;

import dev.iwarp.framing.Crc32c;
import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import io.netty.util.internal.PlatformDependent;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@link Crc32cFeed} agrees with {@link Crc32c} on every kind of buffer, and reuses its view. */
class Crc32cFeedTest {

    private static int feed(Crc32cFeed feed, ByteBuf buf, int index, int length) {
        CRC32C crc = new CRC32C();
        feed.update(crc, buf, index, length);
        return (int) crc.getValue();
    }

    @Test
    void agreesWithCrc32cAcrossBuffersRootsAndOffsets() {
        Random rnd = new Random(13);
        Crc32cFeed feed = new Crc32cFeed();
        ByteBufAllocator[] allocators = {PooledByteBufAllocator.DEFAULT, new AdaptiveByteBufAllocator(),
                UnpooledByteBufAllocator.DEFAULT};
        List<ByteBuf> roots = new ArrayList<>();
        try {
            for (ByteBufAllocator alloc : allocators) {
                roots.add(alloc.directBuffer(70_000).writeBytes(random(rnd, 70_000)));
                roots.add(alloc.heapBuffer(3_000).writeBytes(random(rnd, 3_000)));
            }
            roots.add(Unpooled.wrappedBuffer(Unpooled.directBuffer(100).writeBytes(random(rnd, 100)),
                    Unpooled.wrappedBuffer(random(rnd, 50))));
            for (int i = 0; i < 3_000; i++) {
                // alternate between roots, so the feed rebases and comes back to earlier memory
                ByteBuf root = roots.get(rnd.nextInt(roots.size()));
                int index = rnd.nextInt(root.writerIndex());
                int length = rnd.nextInt(root.writerIndex() - index + 1);
                int kind = rnd.nextInt(4);
                ByteBuf retained = kind == 2 ? root.retainedSlice(index, length) : null;
                ByteBuf buf = switch (kind) {
                    case 0 -> root;
                    case 1 -> root.slice(index, length);
                    case 2 -> retained.slice(0, length);
                    default -> root.duplicate();
                };
                int at = kind == 0 || kind == 3 ? index : 0;
                try {
                    assertEquals(Crc32c.compute(buf, at, length), feed(feed, buf, at, length),
                            "region " + at + " +" + length + " of " + buf);
                } finally {
                    if (retained != null) {
                        retained.release();
                    }
                }
            }
        } finally {
            roots.forEach(ByteBuf::release);
        }
    }

    @Test
    void memoryReusedByAnotherBufferIsReadAsItsNewOctets() {
        Crc32cFeed feed = new Crc32cFeed();
        Random rnd = new Random(5);
        for (int round = 0; round < 50; round++) {
            ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(4096).writeBytes(random(rnd, 4096));
            try {
                ByteBuf slice = buf.slice(100, 3000);
                assertEquals(Crc32c.compute(slice, 0, 3000), feed(feed, slice, 0, 3000));
            } finally {
                buf.release(); // the next round's buffer likely gets this memory back
            }
        }
    }

    @Test
    void slicesOfOneDirectBufferNeedNoViewEach() {
        assumeTrue(PlatformDependent.hasUnsafe(), "needs memory addresses");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        // no leak-detection wrapper: this measures the feed, not the detector's access records
        ByteBuf region = new UnpooledUnsafeDirectByteBuf(UnpooledByteBufAllocator.DEFAULT, 1 << 20, 1 << 20);
        try {
            region.writeBytes(random(new Random(1), 1 << 20));
            int n = 2_000;
            ByteBuf[] slices = new ByteBuf[n];
            for (int i = 0; i < n; i++) {
                slices[i] = region.slice((i * 509) % ((1 << 20) - 1500), 1500);
            }
            Crc32cFeed feed = new Crc32cFeed();
            CRC32C crc = new CRC32C();
            long expected = 0;
            for (ByteBuf s : slices) { // reference values (and class loading) before measuring
                expected += Crc32c.compute(s, 0, 1500);
            }
            long before = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
            long sum = 0;
            for (ByteBuf s : slices) {
                crc.reset();
                feed.update(crc, s, 0, 1500);
                sum += (int) crc.getValue();
            }
            long allocated = threads.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
            assertEquals(expected, sum);
            // one view per rebase at most; a NIO view per slice would be 64 B or more each
            assertTrue(allocated < 4 * n, allocated + " octets allocated for " + n + " slices");
        } finally {
            region.release();
        }
    }

    /**
     * Short regions, each in memory the view does not cover (receive buffers that moved), are fed through the
     * scratch array: no view per buffer. Longer ones still take a view of their memory; all agree with Crc32c.
     */
    @Test
    void shortRegionsInEverNewMemoryNeedNoViewEach() {
        assumeTrue(PlatformDependent.hasUnsafe(), "needs memory addresses");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        int n = 2_000;
        // no leak-detection wrapper: this measures the feed, not the detector's access records
        ByteBuf[] buffers = new ByteBuf[n];
        Random rnd = new Random(3);
        try {
            for (int i = 0; i < n; i++) {
                buffers[i] = new UnpooledUnsafeDirectByteBuf(UnpooledByteBufAllocator.DEFAULT, 128, 128)
                        .writeBytes(random(rnd, 128));
            }
            Crc32cFeed feed = new Crc32cFeed();
            for (int length : new int[] {1, 88, 128}) { // and class loading before measuring
                assertEquals(Crc32c.compute(buffers[length], 0, length), feed(feed, buffers[length], 0, length));
            }
            long expected = 0;
            for (ByteBuf b : buffers) {
                expected += Crc32c.compute(b, 20, 88);
            }
            CRC32C crc = new CRC32C();
            long before = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
            long sum = 0;
            for (ByteBuf b : buffers) {
                crc.reset();
                feed.update(crc, b, 20, 88);
                sum += (int) crc.getValue();
            }
            long allocated = threads.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
            assertEquals(expected, sum);
            // a view per buffer would be 64 B or more each; the scratch array is taken once
            assertTrue(allocated < Crc32cFeed.SCRATCH_LENGTH + 4 * n, allocated + " octets allocated for " + n + " buffers");
        } finally {
            for (ByteBuf b : buffers) {
                if (b != null) {
                    b.release();
                }
            }
        }
        ByteBuf big = new UnpooledUnsafeDirectByteBuf(UnpooledByteBufAllocator.DEFAULT, 8192, 8192);
        try {
            big.writeBytes(random(rnd, 8192));
            Crc32cFeed feed = new Crc32cFeed();
            for (int length : new int[] {Crc32cFeed.SCRATCH_LENGTH, Crc32cFeed.SCRATCH_LENGTH + 1, 8000}) {
                assertEquals(Crc32c.compute(big, 3, length), feed(feed, big, 3, length), "length " + length);
            }
        } finally {
            big.release();
        }
    }

    /**
     * Receive buffers of the adaptive allocator, each a new buffer in memory its chunk reuses, are read through
     * one view of the chunk: no view per buffer (40 % of a CRC-checked 64 KiB message's allocation before).
     */
    @Test
    void adaptiveReceiveBuffersAreReadThroughAViewOfTheirChunk() {
        assumeTrue(PlatformDependent.hasUnsafe(), "needs memory addresses");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        AdaptiveByteBufAllocator alloc = new AdaptiveByteBufAllocator(true, false);
        Random rnd = new Random(8);
        byte[] data = random(rnd, 65536);
        Crc32cFeed feed = new Crc32cFeed();
        int n = 2_000;
        int[] expected = new int[n];
        int[] lengths = new int[n];
        for (int i = 0; i < n; i++) {
            lengths[i] = 65536 - rnd.nextInt(4096); // a bulk transfer's reads, longer than the scratch array takes
            expected[i] = Crc32c.compute(Unpooled.wrappedBuffer(data), 0, lengths[i]);
        }
        ByteBuf first = alloc.directBuffer(65536).writeBytes(data);
        try {
            ByteBuf adaptive = first.unwrap() != null ? first.unwrap() : first; // past a leak-detection wrapper
            ByteBuf chunk = Crc32cFeed.memoryRoot(adaptive);
            assertTrue(chunk != adaptive && chunk.capacity() > adaptive.capacity()
                            && adaptive.memoryAddress() >= chunk.memoryAddress()
                            && adaptive.memoryAddress() + adaptive.capacity() <= chunk.memoryAddress() + chunk.capacity(),
                    "the chunk of " + adaptive + " is " + chunk);
            assertEquals(expected[0], feed(feed, adaptive, 0, lengths[0]));
        } finally {
            first.release();
        }
        // as a channel reads: a buffer, filled, its CRC taken, released before the next read
        ByteBuf[] reads = new ByteBuf[n];
        int[] crcs = new int[n];
        CRC32C crc = new CRC32C();
        long allocated = 0;
        try {
            for (int i = 0; i < n; i++) {
                reads[i] = alloc.directBuffer(lengths[i]).writeBytes(data, 0, lengths[i]);
                ByteBuf adaptive = reads[i].unwrap() != null ? reads[i].unwrap() : reads[i];
                long before = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
                crc.reset();
                feed.update(crc, adaptive, 0, lengths[i]);
                crcs[i] = (int) crc.getValue();
                allocated += threads.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
                reads[i].release();
                reads[i] = null;
            }
        } finally {
            for (ByteBuf b : reads) {
                if (b != null) {
                    b.release();
                }
            }
        }
        assertEquals(java.util.Arrays.toString(expected), java.util.Arrays.toString(crcs));
        // a view per buffer would be 64 B or more each
        assertTrue(allocated < 4 * n, allocated + " octets allocated for " + n + " receive buffers");
    }

    @Test
    void aCompositeOfReadsIsFedPartByPartWithoutViews() {
        assumeTrue(PlatformDependent.hasUnsafe(), "needs memory addresses");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        byte[] data = random(new Random(2), 3 * 65536);
        ByteBuf region = new UnpooledUnsafeDirectByteBuf(UnpooledByteBufAllocator.DEFAULT, data.length, data.length);
        io.netty.buffer.CompositeByteBuf composite = UnpooledByteBufAllocator.DEFAULT.compositeBuffer(64);
        try {
            region.writeBytes(data);
            // as FpduCumulator builds it: reads of the same memory, in uneven pieces
            int at = 0;
            for (int n : new int[] {7, 40000, 2048, 65536, 30001, 58016}) {
                composite.addComponent(true, region.retainedSlice(at, n));
                at += n;
            }
            Crc32cFeed feed = new Crc32cFeed();
            CRC32C crc = new CRC32C();
            int[][] ranges = {{0, at}, {5, 40010}, {40007, 2048}, {39999, 100000}, {at - 3, 3}};
            for (int[] r : ranges) {
                crc.reset();
                feed.update(crc, composite, r[0], r[1]);
                assertEquals(Crc32c.compute(Unpooled.wrappedBuffer(data), r[0], r[1]), (int) crc.getValue(),
                        r[0] + "+" + r[1]);
            }
            long before = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
            for (int i = 0; i < 1000; i++) {
                crc.reset();
                feed.update(crc, composite, 5, at - 10);
            }
            long allocated = threads.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
            // nioBuffers() would build an array and six views (over 400 B) every time
            assertTrue(allocated < 4 * 1000, allocated + " octets allocated for 1000 composites");
        } finally {
            composite.release();
            region.release();
        }
    }

    private static byte[] random(Random rnd, int n) {
        byte[] b = new byte[n];
        rnd.nextBytes(b);
        return b;
    }
}
