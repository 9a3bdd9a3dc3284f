package dev.iwarp.server;

import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The small Sends an {@link RpingSession} answers with, each from a registered buffer of its own made at its first
 * use and kept for the next until the connection closes: rping's go-ahead, bench's hello answer ({@link BenchHello})
 * and cost answer ({@link BenchCost}). A session that never answered holds none. Null once released: the connection
 * is closing.
 */
final class SessionReplies {
    private final WireDomain domain;
    private final ByteBufAllocator alloc;
    /** The go-ahead's 16 zero octets and their region. */
    private ByteBuf goAheadMemory;
    private WireRegion goAhead;
    private ByteBuf helloMemory;
    private WireRegion hello;
    private ByteBuf costMemory;
    private WireRegion cost;
    private boolean released;

    SessionReplies(WireDomain domain, ByteBufAllocator alloc) {
        this.domain = domain;
        this.alloc = alloc;
    }

    /** The go-ahead: 16 zero octets (rdma-core's rping.c). */
    synchronized WireRegion goAhead() {
        if (released) {
            return null;
        }
        if (goAhead == null) {
            goAheadMemory = alloc.directBuffer(Advertisement.LENGTH, Advertisement.LENGTH);
            goAheadMemory.setZero(0, Advertisement.LENGTH);
            goAhead = domain.register(goAheadMemory);
        }
        return goAhead;
    }

    /** Whether a bench hello was answered (one per connection). On the event loop, the only one that answers. */
    boolean helloAnswered() {
        return hello != null;
    }

    /** The answer to a bench hello: {@code granted} receives of {@code size} octets posted. */
    synchronized WireRegion helloAnswer(int size, int granted) {
        if (released) {
            return null;
        }
        if (hello == null) {
            helloMemory = alloc.directBuffer(BenchHello.LENGTH, BenchHello.LENGTH);
            hello = domain.register(helloMemory);
        }
        BenchHello.writeAnswer(helloMemory, 0, size, granted);
        return hello;
    }

    /** The answer to a bench cost request: what this process spent so far. */
    synchronized WireRegion costAnswer() {
        if (released) {
            return null;
        }
        if (cost == null) {
            costMemory = alloc.directBuffer(BenchCost.ANSWER_LENGTH, BenchCost.ANSWER_LENGTH);
            cost = domain.register(costMemory);
        }
        BenchCost.writeAnswer(costMemory, 0, BenchCost.Snapshot.ofThisProcess());
        return cost;
    }

    /** Deregisters the buffers made and releases their memory. */
    synchronized void release() {
        if (!released) {
            released = true;
            release(goAhead, goAheadMemory);
            release(hello, helloMemory);
            release(cost, costMemory);
        }
    }

    private static void release(WireRegion region, ByteBuf memory) {
        if (region != null) {
            region.deregister();
            memory.release();
        }
    }
}
