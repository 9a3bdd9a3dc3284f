package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;

/**
 * Slices of registered memory for one stream, reused: a released slice is pointed at the next range asked for
 * instead of a new slice object per segment read into a region or per message sent from one (RFC 5041 §5.1, §5.2:
 * each placement and each outbound payload is a range of a tagged buffer). What {@link #slice} returns behaves
 * as {@code memory.retainedSlice(index, length)}: the caller owns one reference, the memory stays alive until
 * the slice's last release, its capacity is exactly the range (nothing outside it is read or written), and its
 * {@code retainedSlice} is another slice of this pool (the segments of an outbound message).
 *
 * <p>Slices are taken on the stream's event loop. A slice released there goes back to this pool (at most
 * {@value #MAX_KEPT} are kept); one released on another thread (a handler that kept it) is left to the garbage
 * collector, so the pool itself needs no lock.
 */
public final class RegionViews {
    /**
     * Released slices kept at most: 16 messages of four segments each in flight at once (serve's default IRD and
     * ORD, 64 KiB messages at a 16 KiB MULPDU). A deeper pipeline makes a slice for each one beyond (one small object
     * per segment, as a retained slice would be); a peer that once ran one cannot leave more than these kept on an
     * idle connection (a stream has three pools: about 15 KiB of slice objects at most).
     */
    static final int MAX_KEPT = 64;
    private final FreeList<RegionView> free = new FreeList<>(MAX_KEPT);
    /** The thread slices are taken on (the stream's event loop); only it gives them back. */
    private volatile Thread thread;
    /** Slices made (not reused) so far. */
    private long made;

    /**
     * {@code [index, index + length)} of {@code memory} as a retained slice, readable whole (reader index 0,
     * writer index {@code length}); {@code memory} is retained until the slice's last release.
     *
     * @throws IndexOutOfBoundsException if the range leaves {@code memory}'s capacity
     */
    public ByteBuf slice(ByteBuf memory, int index, int length) {
        if (index < 0 || length < 0 || index > memory.capacity() - length) {
            throw new IndexOutOfBoundsException(memory + ".slice(" + index + ", " + length + ')');
        }
        Thread t = Thread.currentThread();
        if (thread != t) {
            thread = t;
        }
        RegionView v = free.poll();
        if (v == null) {
            v = new RegionView(this);
            made++;
        }
        return v.point(memory, index, length);
    }

    /** Slices this pool made rather than reused, so far (read on the event loop). */
    public long made() {
        return made;
    }

    /** {@code v}'s last reference was released: reused, when that happened on the thread slices are taken on. */
    void released(RegionView v) {
        if (Thread.currentThread() == thread) {
            free.offer(v);
        }
    }
}
