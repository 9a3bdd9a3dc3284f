package dev.iwarp.verbs;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A completion queue (libibverbs ibv_cq): completions are added on the connection's event loop and
 * read from any thread by {@link #poll()}, {@link #take(long, TimeUnit)} or a listener. Thread-safe.
 */
public final class CompletionQueue {
    private final LinkedBlockingQueue<Completion> queue = new LinkedBlockingQueue<>();
    private volatile CompletionListener listener;

    /**
     * Routes completions to {@code listener} instead of the queue (on the event loop; it must not
     * block). Completions already queued stay there.
     */
    public void setListener(CompletionListener listener) {
        this.listener = listener;
    }

    void add(Completion c) {
        CompletionListener l = listener;
        if (l != null) {
            l.onCompletion(c);
        } else {
            queue.add(c);
        }
    }

    /** The oldest completion, or {@code null} when none is queued. */
    public Completion poll() {
        return queue.poll();
    }

    /** Up to {@code max} queued completions, oldest first. */
    public List<Completion> poll(int max) {
        List<Completion> out = new ArrayList<>(Math.min(max, 64));
        queue.drainTo(out, max);
        return out;
    }

    /** Waits up to the timeout for a completion; {@code null} on timeout. */
    public Completion take(long timeout, TimeUnit unit) throws InterruptedException {
        return queue.poll(timeout, unit);
    }

    /** Completions currently queued. */
    public int size() {
        return queue.size();
    }
}
