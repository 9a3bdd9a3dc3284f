package dev.iwarp.sctp;

/**
 * How the Adaptation Layer Indications are exchanged (draft-stewart-otis-sctp-ddp-rdma-00 §2.1 puts
 * it in INIT/INIT-ACK, which the JDK's SCTP API cannot set: hence the native and fallback ways).
 */
public enum IndicationTransport {
    /**
     * As the draft says: our value in the INIT/INIT-ACK parameter 0xC006 (setsockopt
     * SCTP_ADAPTATION_LAYER), the peer's read from its SCTP_ADAPTATION_INDICATION notification before
     * the first receive. Linux only, through JNA; the channel must be an {@link SctpShimChannel}.
     */
    NATIVE,
    /**
     * Opt-in fallback: each side's first user message is the 8-octet parameter (our fallback where
     * the indication cannot be set in INIT; not in the draft). Deviates
     * from the draft on the wire: a draft-conformant peer sees no indication from us.
     */
    HELLO,
    /** Opt-in fallback: nothing on the wire; the peer's value is configuration. */
    STATIC
}
