package dev.iwarp.ddp.llp;

/**
 * The RFC 6581 "ready to receive" message the Initiator's RDMAP sends as its first message when the
 * framing negotiated the peer-to-peer model; the Responder's RDMAP consumes it invisibly and only
 * then sends anything itself (RFC 6581 §5-§6).
 */
public enum RtrMessage {
    /** A zero-length Send: takes MSN 1 of the Responder's QN 0 without a receive buffer. */
    SEND,
    /** A zero-length RDMA Write (not validated by the Responder). */
    WRITE,
    /** A zero-length RDMA Read: the Responder answers with a zero-length Read Response. */
    READ
}
