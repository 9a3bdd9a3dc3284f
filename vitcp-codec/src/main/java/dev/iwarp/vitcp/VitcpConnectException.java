package dev.iwarp.vitcp;

/** VI/TCP connection establishment failed (draft-dicecco-vitcp-01 §4.2, §4.3). */
public class VitcpConnectException extends Exception {
    private static final long serialVersionUID = 1L;

    /** Why. */
    public enum Reason {
        /** The peer sent ConnectReject. */
        REJECTED,
        /** The peer sent ConnectNoMatch: no listener for the discriminator. */
        NO_MATCH,
        /** The consumer's connection timeout expired (§4.2 "Timeout"). */
        TIMEOUT,
        /** TCP closed before the connection was established. */
        CONNECTION_CLOSED,
        /** TCP setup failed (§4.2 "TCP setup fail"). */
        TCP_SETUP_FAILED,
        /** The peer's CE header broke a rule of §3.3 (reliability/peer-to-peer mismatch, MTU or window raised). */
        ATTRIBUTE_MISMATCH,
        /** The peer sent something that is not VI/TCP, or the wrong segment. */
        PROTOCOL_ERROR
    }

    private final Reason reason;

    public VitcpConnectException(Reason reason, String message) {
        super(reason + ": " + message);
        this.reason = reason;
    }

    public VitcpConnectException(Reason reason, String message, Throwable cause) {
        super(reason + ": " + message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
