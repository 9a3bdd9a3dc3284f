package dev.iwarp.sctp;

/**
 * How the Adaptation Layer Indications are exchanged (digest §11.1, §15 Q12).
 */
public enum IndicationTransport {
    /**
     * As the draft says: our value in the INIT/INIT-ACK parameter 0xC006 (setsockopt
     * SCTP_ADAPTATION_LAYER), the peer's read from its SCTP_ADAPTATION_INDICATION notification before
     * the first receive (§11.2). Linux only, through JNA; the channel must be an {@link SctpShimChannel}.
     */
    NATIVE,
    /**
     * Opt-in fallback: each side's first user message is the 8-octet parameter (§12.4 [D]). Deviates
     * from the draft on the wire: a draft-conformant peer sees no indication from us.
     */
    HELLO,
    /** Opt-in fallback: nothing on the wire; the peer's value is configuration (§11.1 option B). */
    STATIC
}
