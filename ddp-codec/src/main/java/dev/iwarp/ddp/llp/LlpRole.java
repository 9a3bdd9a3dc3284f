package dev.iwarp.ddp.llp;

/**
 * Which end of the stream this is. The Initiator started the connection (MPA Initiator, IFT node A,
 * the SCTP association's active side); the Responder accepted it. RDMAP cares for one reason: with
 * an RFC 6581 RTR the Initiator sends the RTR and the Responder consumes it.
 */
public enum LlpRole {
    /** The end that opened the connection. */
    INITIATOR,
    /** The end that accepted it. */
    RESPONDER
}
