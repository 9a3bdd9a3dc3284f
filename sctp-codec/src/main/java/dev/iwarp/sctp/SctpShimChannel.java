package dev.iwarp.sctp;

/**
 * What the shim needs from an SCTP channel beyond Netty's {@code SctpChannel}: the peer's indication
 * as read natively before the first receive, and a real abort (SO_LINGER 0 then close, so
 * the stack sends ABORT; Netty's config cannot set SO_LINGER on SCTP).
 */
public interface SctpShimChannel {
    /** Value of {@link #peerIndicationValue()} when the peer's INIT/INIT-ACK carried no 0xC006. */
    long NO_INDICATION = -1;

    /**
     * The value of the peer's Adaptation Layer Indication, or {@link #NO_INDICATION}.
     *
     * @throws IllegalStateException when this channel does not read it natively
     */
    long peerIndicationValue();

    /** Aborts the association: SCTP ABORT instead of SHUTDOWN. */
    void abort();
}
