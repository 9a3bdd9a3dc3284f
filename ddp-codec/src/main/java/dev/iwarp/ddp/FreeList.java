package dev.iwarp.ddp;

import java.util.ArrayDeque;

/**
 * Objects given back for reuse, at most a fixed number of them: what the DDP and RDMA engines take
 * instead of allocating one per message or request once warm (issue 13). The most recently given back
 * comes first (its cache lines are the warmest). Not thread-safe: one per stream, on its event loop.
 *
 * @param <T> what is kept; never null
 */
public final class FreeList<T> {
    private final ArrayDeque<T> kept;
    private final int max;

    /** A list that keeps at most {@code max} objects. */
    public FreeList(int max) {
        this.max = max;
        kept = new ArrayDeque<>(max);
    }

    /** A kept object, which leaves the list, or {@code null} when none is kept. */
    public T poll() {
        return kept.poll();
    }

    /** Keeps {@code t} for reuse, unless {@code max} objects are kept already. */
    public void offer(T t) {
        if (kept.size() < max) {
            kept.push(t);
        }
    }
}
