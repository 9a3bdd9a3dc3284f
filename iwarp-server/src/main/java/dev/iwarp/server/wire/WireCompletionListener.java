package dev.iwarp.server.wire;

/**
 * Completions of one connection's work requests, on its event loop. Primitives only: the adapters allocate
 * nothing per completion on top of what the wire's own completion object costs.
 */
@FunctionalInterface
public interface WireCompletionListener {
    /**
     * @param wrId       the work request id given when posting
     * @param receive    a receive-queue completion (else a send-queue one: Send, RDMA Read, RDMA Write)
     * @param success    completed without error
     * @param byteLength octets transferred (received octets for receives)
     * @param status     the wire's own status ({@code WcStatus} or {@code ViStatus}), for log lines
     */
    void completed(long wrId, boolean receive, boolean success, int byteLength, Enum<?> status);
}
