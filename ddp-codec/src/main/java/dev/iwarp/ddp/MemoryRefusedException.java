package dev.iwarp.ddp;

/**
 * Memory a peer's message needs (an on-demand tagged buffer's) was refused by its {@link MemoryAccount}: the budget
 * of memory committed on peers' behalf is spent. Only the stream that asked ends (the RDMA engine answers with a
 * Terminate); nothing was placed.
 */
public final class MemoryRefusedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public MemoryRefusedException(String message) {
        super(message, null, false, false); // an answer to a peer, not a bug: no stack trace to fill
    }
}
