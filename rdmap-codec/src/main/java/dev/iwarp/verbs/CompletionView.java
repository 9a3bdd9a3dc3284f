package dev.iwarp.verbs;

/**
 * A work completion's fields (libibverbs ibv_wc): a kept {@link Completion}, or the object a
 * {@link CompletionQueue} refills for each call of a reusing listener
 * ({@link CompletionQueue#setReusingListener}), which is valid only during that call.
 */
public interface CompletionView {
    /** The work request id given when posting. */
    long wrId();

    /** How the work request completed. */
    WcStatus status();

    /** Whether the work request completed successfully ({@link WcStatus#SUCCESS}). */
    default boolean isSuccess() {
        return status() == WcStatus.SUCCESS;
    }

    /** What kind of work request completed. */
    WcOpcode opcode();

    /** Octets received (receives), read (RDMA Read) or sent. */
    int byteLength();

    /** Whether a Send with Invalidate invalidated one of our STags ({@link #invalidatedStag()}). */
    boolean hasInvalidatedStag();

    /** The STag the peer's Send with Invalidate invalidated, when {@link #hasInvalidatedStag()}. */
    int invalidatedStag();

    /** RFC 7306 Immediate Data (receives of Immediate Data), or the original value of an atomic. */
    long immediateData();

    /** The message asked for a solicited event (SE variants). */
    boolean solicited();

    /** For errors: what happened, e.g. the Terminate the peer sent. {@code null} on success. */
    String detail();

    /** This completion as an immutable object that may be kept: itself when it is a {@link Completion}. */
    Completion toCompletion();
}
