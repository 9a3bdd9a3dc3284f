package dev.iwarp.mpa;

/** MPA roles (RFC 5044 §7.1): independent of who did the TCP connect, though rdma_cm ties them. */
public enum MpaRole {
    /** Sends the MPA Request and validates the Reply. */
    INITIATOR,
    /** Validates the Request, lets the ULP accept or reject, sends the Reply. */
    RESPONDER
}
