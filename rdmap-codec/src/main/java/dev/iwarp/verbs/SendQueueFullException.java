package dev.iwarp.verbs;

/**
 * {@link QueuePair#postSend} found the send queue full: as many requests as its depth (libibverbs
 * {@code max_send_wr}) are posted and not completed yet. Nothing was queued; post again once a
 * completion left (ibv_post_send returns ENOMEM in the same case).
 */
public final class SendQueueFullException extends IllegalStateException {
    private static final long serialVersionUID = 1L;
    private final int depth;

    public SendQueueFullException(int depth) {
        super("send queue full: " + depth + " requests posted and not completed (the queue pair's send-queue depth)");
        this.depth = depth;
    }

    /** The send-queue depth that was reached. */
    public int depth() {
        return depth;
    }
}
