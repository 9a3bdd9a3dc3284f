package dev.iwarp.server.perftest;

import dev.iwarp.server.wire.WireCompletionListener;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Completions of several connections in one queue, for the one thread that runs a test. */
final class Events {
    /** One completion: which connection ({@code qp}), which queue, and how it ended. */
    record Event(int qp, long wrId, boolean receive, boolean success, int byteLength, Enum<?> status) {
    }

    private final LinkedBlockingQueue<Event> queue = new LinkedBlockingQueue<>();

    /** The listener for connection {@code qp}. */
    WireCompletionListener listener(int qp) {
        return (wrId, receive, success, byteLength, status) ->
                queue.add(new Event(qp, wrId, receive, success, byteLength, status));
    }

    /** The next completion, or null after {@code timeoutMs}. */
    Event poll(long timeoutMs) throws PerftestException {
        try {
            return queue.poll(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PerftestException("interrupted");
        }
    }

    Event pollNow() {
        return queue.poll();
    }
}
