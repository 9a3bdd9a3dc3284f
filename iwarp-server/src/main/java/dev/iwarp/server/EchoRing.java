package dev.iwarp.server;

import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The receives an {@link RpingSession} grants {@code bench --op send} for pipelined echoes ({@link BenchHello}): one
 * region of {@code 2 x granted} slots, the granted receives posted and as many spares for their replacements. Every
 * Send received into a slot is echoed from it; the slot is free again once its echo completed.
 *
 * <p>A receive's replacement is posted from a free slot before its echo is sent: the client sends its next Send once
 * it has the echo, and a transport may report the echo's completion long after that Send arrived (io_uring: dozens of
 * echoes late). With no slot free, the echo waits in {@code held} (slots in arrival order, {@code heldLength} per
 * slot) until a completion frees one: an echo never leaves before its replacement is posted, so the client, which
 * sends only after an echo, always finds the granted receives, however late completions come.
 *
 * <p>Runs on the connection's event loop, as the session's completions do.
 */
final class EchoRing {
    /** Plus the slot: a receive of the ring. */
    static final long WR_RECV = 1L << 32;
    /** Plus the slot: the echo of a ring receive. */
    static final long WR_ECHO = 2L << 32;

    private final WireConnection conn;
    private final ByteBuf memory;
    private final WireRegion region;
    private final int slotSize;
    /** Slots holding neither a posted receive nor an echo still on its way (a stack). */
    private final int[] freeSlots;
    private int freeCount;
    private final int[] held;
    private final int[] heldLength;
    private int heldFirst;
    private int heldCount;

    /** Registers the ring ({@code granted} > 0 receives of {@code size} octets) and posts its receives. */
    EchoRing(WireDomain domain, ByteBufAllocator alloc, WireConnection conn, int size, int granted) {
        this.conn = conn;
        this.slotSize = size;
        int slots = 2 * granted; // the granted receives posted, and as many spares for their replacements
        memory = alloc.directBuffer(slots * size, slots * size);
        region = domain.register(memory, WireAccess.LOCAL_WRITE);
        freeSlots = new int[slots];
        held = new int[slots];
        heldLength = new int[slots];
        for (int slot = slots - 1; slot >= granted; slot--) {
            freeSlots[freeCount++] = slot;
        }
        for (int slot = 0; slot < granted; slot++) {
            conn.postRecv(WR_RECV + slot, region, slot * size, size);
        }
    }

    /** Whether {@code wrId} is a receive of a ring. */
    static boolean isReceive(long wrId) {
        return wrId >= WR_RECV && wrId < WR_ECHO;
    }

    /** A Send of {@code length} octets arrived in the receive {@code wrId}: echo it once a replacement is posted. */
    void received(long wrId, int length) {
        int slot = (int) (wrId - WR_RECV);
        if (freeCount > 0) { // then nothing is held: echoes leave in arrival order
            echoAfterReplacement(freeSlots[--freeCount], slot, length);
        } else {
            int at = (heldFirst + heldCount++) % held.length;
            held[at] = slot;
            heldLength[slot] = length;
        }
    }

    /** The echo {@code wrId} completed: its slot takes the replacement of the oldest held echo, or is free. */
    void echoed(long wrId) {
        int slot = (int) (wrId - WR_ECHO);
        if (heldCount > 0) { // the held echo leaves now
            int echo = held[heldFirst];
            heldFirst = (heldFirst + 1) % held.length;
            heldCount--;
            echoAfterReplacement(slot, echo, heldLength[echo]);
        } else {
            freeSlots[freeCount++] = slot;
        }
    }

    /** Posts a receive into the free slot {@code spare}, then the echo of the Send received in {@code slot}. */
    private void echoAfterReplacement(int spare, int slot, int length) {
        conn.postRecv(WR_RECV + spare, region, spare * slotSize, slotSize);
        conn.postSend(WR_ECHO + slot, region, slot * slotSize, length); // the slot is free once this completed
    }

    /** Octets of memory the ring holds (reserved in the domain's memory account by whoever made it). */
    int octets() {
        return memory.capacity();
    }

    /** Deregisters the ring and releases its memory. */
    void release() {
        region.deregister();
        memory.release();
    }
}
