package dev.iwarp.vitcp.vi;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

/**
 * Completions of one or more endpoints' work queues (VIA Completion Queue; verbs CQ). Poll it from any thread or
 * set a listener, which is called on the connection's event loop (keep it short).
 */
public final class ViCompletionQueue {
    private final ConcurrentLinkedQueue<ViCompletion> queue = new ConcurrentLinkedQueue<>();
    private volatile Consumer<ViCompletion> listener;

    /** The oldest completion, or null. */
    public ViCompletion poll() {
        return queue.poll();
    }

    /** Completions queued and not yet taken. */
    public int size() {
        return queue.size();
    }

    /** With a listener, completions go to it instead of the queue. */
    public void setListener(Consumer<ViCompletion> listener) {
        this.listener = listener;
    }

    void add(ViCompletion c) {
        Consumer<ViCompletion> l = listener;
        if (l != null) {
            l.accept(c);
        } else {
            queue.add(c);
        }
    }
}
