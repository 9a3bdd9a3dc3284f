package dev.iwarp.testkit.fuzz;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;

import java.util.ArrayList;
import java.util.List;

/**
 * An unpooled allocator that remembers every buffer it hands out, so a fuzz target can check after
 * each input that all of them were released: a deterministic leak check per input, where Netty's
 * paranoid detector only reports after a garbage collection (and so cannot name the input).
 * Set it on an {@code EmbeddedChannel} before adding the handlers under test.
 */
public final class TrackingAllocator extends AbstractByteBufAllocator {
    private final List<ByteBuf> allocated = new ArrayList<>();

    public TrackingAllocator() {
        super(false);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
        return track(new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity));
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
        return track(new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity));
    }

    @Override
    public CompositeByteBuf compositeHeapBuffer(int maxNumComponents) {
        return track(super.compositeHeapBuffer(maxNumComponents));
    }

    @Override
    public CompositeByteBuf compositeDirectBuffer(int maxNumComponents) {
        return track(super.compositeDirectBuffer(maxNumComponents));
    }

    @Override
    public boolean isDirectBufferPooled() {
        return false;
    }

    /** Buffers handed out so far. */
    public synchronized int allocations() {
        return allocated.size();
    }

    /** Tracks a buffer made elsewhere (e.g. a test's own input) in the same check. */
    public synchronized <T extends ByteBuf> T track(T buf) {
        allocated.add(buf);
        return buf;
    }

    /** Throws if any buffer handed out (or tracked) is still referenced; forgets them all either way. */
    public synchronized void assertAllReleased() {
        int live = 0;
        StringBuilder sb = new StringBuilder();
        for (ByteBuf b : allocated) {
            if (b.refCnt() != 0) {
                if (live++ < 4) {
                    sb.append("\n  ").append(b.getClass().getSimpleName()).append(" refCnt ").append(b.refCnt())
                            .append(" capacity ").append(b.capacity());
                }
            }
        }
        int total = allocated.size();
        allocated.clear();
        if (live > 0) {
            throw new AssertionError(live + " of " + total + " buffers still referenced after the input:" + sb);
        }
    }
}
