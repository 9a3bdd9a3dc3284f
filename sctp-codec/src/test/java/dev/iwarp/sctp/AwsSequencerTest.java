package dev.iwarp.sctp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link AwsSequencer}: release in AWS order whatever the arrival order within the window; C9 for
 * duplicates (released or held), for AWS behind the cumulative one and beyond the window; the wrap
 * from 0xFFFFFFFF to 0; and memory that stays bounded when a peer floods out-of-order messages.
 */
class AwsSequencerTest {

    private static PlacementChunk chunk(long aws, ByteBuf data) {
        return new PlacementChunk(PlacementMode.NO_PLACEMENT, 0, 0, 0, aws, 0, 0, true, data);
    }

    private static PlacementChunk chunk(long aws) {
        ByteBuf b = Unpooled.buffer(8).writeLong(aws);
        return chunk(aws, b);
    }

    private static ShimChannels.Channel channel(AwsSequencer s) {
        return new ShimChannels.Channel(s);
    }

    /** Feeds {@code order} and returns the AWS values in the order they came out. */
    private static List<Long> feed(ShimChannels.Channel ch, List<Long> order) {
        List<Long> out = new ArrayList<>();
        for (long aws : order) {
            ch.writeInbound(chunk(aws));
            for (PlacementChunk c; (c = ch.readInbound()) != null; ) {
                assertEquals(c.aws(), c.content().getLong(0), "data travels with its AWS");
                out.add(c.aws());
                c.release();
            }
        }
        return out;
    }

    private static List<Long> range(long first, int n) {
        List<Long> l = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            l.add((first + i) & 0xFFFFFFFFL);
        }
        return l;
    }

    @Test
    void inOrder() {
        ShimChannels.Channel ch = channel(new AwsSequencer(16, 1 << 20));
        assertEquals(range(1, 100), feed(ch, range(1, 100)));
        assertTrue(ch.errors.seen.isEmpty());
        ch.finishAndReleaseAll();
    }

    @Test
    void reversedWithinTheWindow() {
        AwsSequencer s = new AwsSequencer(16, 1 << 20);
        ShimChannels.Channel ch = channel(s);
        List<Long> rev = range(1, 16);
        Collections.reverse(rev);
        List<Long> out = feed(ch, rev);
        assertEquals(range(1, 16), out);
        assertEquals(16, s.cumulativeAws());
        assertEquals(0, s.heldMessages());
        assertTrue(ch.errors.seen.isEmpty());
        ch.finishAndReleaseAll();
    }

    @RepeatedTest(20)
    void randomPermutationsWithinTheWindow() {
        Random r = new Random();
        long seed = r.nextLong();
        r.setSeed(seed);
        int window = 32;
        ShimChannels.Channel ch = channel(new AwsSequencer(window, 1 << 20));
        List<Long> order = new ArrayList<>();
        // blocks of `window` shuffled: every arrival is within the window of the expected AWS
        for (int block = 0; block < 20; block++) {
            List<Long> b = range(1 + block * window, window);
            Collections.shuffle(b, r);
            order.addAll(b);
        }
        assertEquals(range(1, 20 * window), feed(ch, order), "seed " + seed);
        assertTrue(ch.errors.seen.isEmpty(), "seed " + seed);
        ch.finishAndReleaseAll();
    }

    @Test
    void duplicateOfAReleasedAwsIsC9() {
        ShimChannels.Channel ch = channel(new AwsSequencer(16, 1 << 20));
        assertEquals(range(1, 3), feed(ch, List.of(1L, 2L, 3L)));
        assertEquals(List.of(), feed(ch, List.of(2L, 4L)));
        assertEquals(SctpShimError.C9, ch.errors.only());
        assertEquals(1, ch.aborts);
        ch.finishAndReleaseAll();
    }

    @Test
    void duplicateOfAHeldAwsIsC9AndReleasesWhatWasHeld() {
        AwsSequencer s = new AwsSequencer(16, 1 << 20);
        ShimChannels.Channel ch = channel(s);
        PlacementChunk held = chunk(3);
        ch.writeInbound(held);
        ch.writeInbound(chunk(5));
        assertEquals(2, s.heldMessages());
        assertEquals(List.of(), feed(ch, List.of(3L, 1L)));
        assertEquals(SctpShimError.C9, ch.errors.only());
        assertEquals(0, held.refCnt());
        assertEquals(0, s.heldMessages());
        ch.finishAndReleaseAll();
    }

    @Test
    void gapBeyondTheWindowIsC9() {
        ShimChannels.Channel ch = channel(new AwsSequencer(16, 1 << 20));
        assertEquals(List.of(), feed(ch, List.of(16L))); // 15 ahead: last slot of the window
        assertEquals(List.of(), feed(ch, List.of(17L))); // 16 ahead: beyond
        assertEquals(SctpShimError.C9, ch.errors.only());
        ch.finishAndReleaseAll();
    }

    @Test
    void awsFarAheadIsC9() {
        ShimChannels.Channel ch = channel(new AwsSequencer(SctpSettings.defaults()));
        feed(ch, List.of(1L, 0x7FFFFFFFL));
        assertEquals(SctpShimError.C9, ch.errors.only());
        ch.finishAndReleaseAll();
    }

    @Test
    void firstAwsZeroIsBehindTheStart() {
        ShimChannels.Channel ch = channel(new AwsSequencer(SctpSettings.defaults()));
        feed(ch, List.of(0L));
        assertEquals(SctpShimError.C9, ch.errors.only());
        ch.finishAndReleaseAll();
    }

    @Test
    void wrapsFromMaxToZero() {
        AwsSequencer s = new AwsSequencer(16, 1 << 20, 0xFFFFFFFDL);
        ShimChannels.Channel ch = channel(s);
        List<Long> order = List.of(0xFFFFFFFFL, 1L, 0xFFFFFFFEL, 0L, 2L);
        assertEquals(List.of(0xFFFFFFFEL, 0xFFFFFFFFL, 0L, 1L, 2L), feed(ch, order));
        assertEquals(2, s.cumulativeAws());
        assertTrue(ch.errors.seen.isEmpty());
        // after the wrap, 0xFFFFFFFF is behind
        feed(ch, List.of(0xFFFFFFFFL));
        assertEquals(SctpShimError.C9, ch.errors.only());
        ch.finishAndReleaseAll();
    }

    @Test
    void chunksWithoutAwsPassThrough() {
        ShimChannels.Channel ch = channel(new AwsSequencer(16, 1 << 20));
        PlacementChunk c = chunk(PlacementChunk.NO_AWS, Unpooled.buffer(0));
        ch.writeInbound(c);
        PlacementChunk out = ch.readInbound();
        assertEquals(c, out);
        out.release();
        ch.finishAndReleaseAll();
    }

    /**
     * A peer that never sends AWS 1 and floods 64 MiB of later messages: the sequencer holds at most
     * its byte window, then aborts (C9) and frees everything. Measured on a private pooled allocator.
     */
    @Test
    void memoryBoundedUnderOutOfOrderFlood() {
        PooledByteBufAllocator alloc = new PooledByteBufAllocator(true);
        int window = SctpSettings.DEFAULT_REORDER_BYTES;
        AwsSequencer s = new AwsSequencer(SctpSettings.DEFAULT_REORDER_MESSAGES * 16, window);
        ShimChannels.Channel ch = channel(s);
        int size = 1412;
        long peak = 0;
        int sent = 0;
        for (long aws = 2; aws < 2 + (64 << 20) / size && ch.errors.seen.isEmpty(); aws++) {
            ByteBuf b = alloc.directBuffer(size).writeZero(size);
            ch.writeInbound(chunk(aws, b));
            peak = Math.max(peak, alloc.metric().usedDirectMemory());
            sent++;
        }
        assertNull(ch.readInbound());
        assertEquals(SctpShimError.C9, ch.errors.only());
        assertTrue(sent * (long) size > window && sent * (long) size <= window + size,
                "aborted when the window was full: " + sent + " messages");
        long chunkSize = (long) alloc.metric().chunkSize();
        assertTrue(peak <= window + 2 * chunkSize, "peak pooled memory " + peak + " for a window of " + window);
        assertEquals(0, s.heldBytes());
        ch.finishAndReleaseAll();
        assertEquals(0, alloc.metric().directArenas().stream().mapToLong(a -> a.numActiveAllocations()).sum(),
                "every held message released");
        ByteBufAllocator.DEFAULT.buffer().release();
    }
}
