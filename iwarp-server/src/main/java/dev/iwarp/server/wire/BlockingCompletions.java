package dev.iwarp.server.wire;

import java.io.IOException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A {@link WireCompletionListener} that queues completions for a client thread to take, send and receive apart. */
public final class BlockingCompletions implements WireCompletionListener {
    /** One completion, as the listener got it. */
    public record Done(long wrId, boolean success, int byteLength, Enum<?> status) {
    }

    private final LinkedBlockingQueue<Done> sends = new LinkedBlockingQueue<>();
    private final LinkedBlockingQueue<Done> receives = new LinkedBlockingQueue<>();

    @Override
    public void completed(long wrId, boolean receive, boolean success, int byteLength, Enum<?> status) {
        (receive ? receives : sends).add(new Done(wrId, success, byteLength, status));
    }

    /**
     * The next send-queue ({@code receive} false) or receive-queue completion.
     *
     * @throws IOException when none arrives within {@code timeoutMs} or it completed with an error
     */
    public Done take(boolean receive, long timeoutMs, String what) throws IOException {
        Done d;
        try {
            d = (receive ? receives : sends).poll(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for " + what, e);
        }
        if (d == null) {
            throw new IOException("no completion for " + what + " within " + timeoutMs + " ms");
        }
        if (!d.success()) {
            throw new IOException(what + " failed: " + d.status());
        }
        return d;
    }
}
