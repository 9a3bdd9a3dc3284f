package dev.iwarp.ddp;

import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static dev.iwarp.ddp.AccessFlags.REMOTE_WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Placing a payload that spans socket reads (a view over several buffers, as MPA's reader passes up a ULPDU
 * received in pieces) copies it piece by piece into the region: no merged copy of the payload on the way.
 * Netty 4.2's default (adaptive) buffers implement {@code setBytes(index, ByteBuf src, ...)} by asking the
 * source for one NIO buffer, which a multi-piece source can give only as a fresh heap copy.
 */
class TaggedBufferPlacementTest {
    private static final int PAYLOAD = 65536;

    @Test
    void aPayloadInPiecesIsPlacedWithoutAMergedCopy() {
        AdaptiveByteBufAllocator alloc = new AdaptiveByteBufAllocator();
        ByteBuf region = alloc.directBuffer(PAYLOAD, PAYLOAD);
        region.writeZero(PAYLOAD);
        ByteBuf a = Unpooled.directBuffer(PAYLOAD / 2 + 7);
        ByteBuf b = Unpooled.directBuffer(PAYLOAD / 2 - 7);
        for (int i = 0; i < PAYLOAD; i++) {
            (i < PAYLOAD / 2 + 7 ? a : b).writeByte(i * 31 + 5);
        }
        CompositeByteBuf src = Unpooled.compositeBuffer(2).addComponents(true, a, b);
        TaggedBufferTable table = new TaggedBufferTable();
        TaggedBuffer target = table.register(new Object(), region, 0, REMOTE_WRITE, false);
        try {
            for (int i = 0; i < 200; i++) { // warm-up: the figure below is steady state
                target.placeAt(0, src, 0, PAYLOAD);
            }
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long tid = Thread.currentThread().getId();
            long before = threads.getThreadAllocatedBytes(tid);
            int placements = 50;
            for (int i = 0; i < placements; i++) {
                target.placeAt(0, src, 0, PAYLOAD);
            }
            long perPlacement = (threads.getThreadAllocatedBytes(tid) - before) / placements;
            // a merged copy would be >= 65536 octets per placement
            assertTrue(perPlacement < 1024, "bytes allocated per 64 KiB placement: " + perPlacement);
            byte[] placed = new byte[PAYLOAD];
            region.getBytes(0, placed);
            for (int i = 0; i < PAYLOAD; i++) {
                assertEquals((byte) (i * 31 + 5), placed[i], "octet " + i);
            }
        } finally {
            table.deregister(target.stag());
            src.release();
            region.release();
        }
    }

    @Test
    void memoryFreedMeanwhileIsRefusedNotWritten() {
        ByteBuf region = Unpooled.directBuffer(64, 64).writeZero(64);
        TaggedBufferTable table = new TaggedBufferTable();
        TaggedBuffer target = table.register(new Object(), region, 0, REMOTE_WRITE, false);
        table.deregister(target.stag());
        region.release(); // the owner frees it: a placement still holding the old target must not write
        ByteBuf src = Unpooled.wrappedBuffer(new byte[] {1, 2, 3, 4});
        try {
            assertThrows(IllegalReferenceCountException.class, () -> target.placeAt(0, src, 0, 4));
        } finally {
            src.release();
        }
    }
}
