package dev.iwarp.ddp;

import java.util.Arrays;

/**
 * Objects given back for reuse, at most a fixed number of them: what the DDP and RDMA engines take
 * instead of allocating one per message or request once warm. The most recently given back
 * comes first (its cache lines are the warmest). Not thread-safe: one per stream, on its event loop.
 *
 * <p>A plain array used as a stack: a message takes from and gives back to several of these lists, and
 * an {@link java.util.ArrayDeque}'s size and wrap-around arithmetic was a measurable part of the sender's
 * per-message work.
 *
 * @param <T> what is kept; never null
 */
public final class FreeList<T> {
    private static final Object[] NONE = {};
    /** Empty until the first object is given back: an idle connection holds several lists. */
    private Object[] kept = NONE;
    private int count;
    private final int max;

    /** A list that keeps at most {@code max} objects. */
    public FreeList(int max) {
        this.max = max;
    }

    /** A kept object, which leaves the list, or {@code null} when none is kept. */
    @SuppressWarnings("unchecked")
    public T poll() {
        if (count == 0) {
            return null;
        }
        Object t = kept[--count];
        kept[count] = null; // the list does not keep what it gave out reachable
        return (T) t;
    }

    /** Keeps {@code t} for reuse, unless {@code max} objects are kept already. */
    public void offer(T t) {
        if (count == kept.length) {
            if (count >= max) {
                return;
            }
            // grows to max while the stream warms up, then stays
            kept = Arrays.copyOf(kept, Math.min(max, Math.max(8, count * 2)));
        }
        kept[count++] = t;
    }
}
