package dev.iwarp.ddp;

import java.util.ArrayDeque;

/**
 * Objects given back for reuse, at most a fixed number of them: what the DDP and RDMA engines take
 * instead of allocating one per message or request once warm. The most recently given back
 * comes first (its cache lines are the warmest). Not thread-safe: one per stream, on its event loop.
 *
 * @param <T> what is kept; never null
 */
public final class FreeList<T> {
    /** Null until the first object is given back: an idle connection holds five lists. */
    private ArrayDeque<T> kept;
    private final int max;

    /** A list that keeps at most {@code max} objects. */
    public FreeList(int max) {
        this.max = max;
    }

    /** A kept object, which leaves the list, or {@code null} when none is kept. */
    public T poll() {
        return kept == null ? null : kept.poll();
    }

    /** Keeps {@code t} for reuse, unless {@code max} objects are kept already. */
    public void offer(T t) {
        if (kept == null) {
            kept = new ArrayDeque<>(Math.min(max, 8)); // grows to max while the stream warms up, then stays
        }
        if (kept.size() < max) {
            kept.push(t);
        }
    }
}
