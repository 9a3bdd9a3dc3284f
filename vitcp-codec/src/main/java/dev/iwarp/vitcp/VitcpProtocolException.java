package dev.iwarp.vitcp;

import io.netty.handler.codec.DecoderException;

/**
 * A peer violated draft-dicecco-vitcp-01. Carries which rule ({@link Violation}) and the VI Error Type bits
 * (§3.2 "VI Error Type") that a Reliable Reception connection reports in its Message ACK before closing.
 */
public class VitcpProtocolException extends DecoderException {
    private static final long serialVersionUID = 1L;

    /** What the peer did wrong, with the VI Error Type reported for it. */
    public enum Violation {
        UNSUPPORTED_VERSION(ViRemoteErrorCode.UTE),
        UNKNOWN_TYPE(ViRemoteErrorCode.UTE),
        BAD_SEGMENT_LENGTH(ViRemoteErrorCode.UTE),
        BAD_DATA_OFFSET(ViRemoteErrorCode.UTE),
        BAD_CE_HEADER(ViRemoteErrorCode.UTE),
        BAD_OPTION(ViRemoteErrorCode.UTE),
        CRC_ERROR(ViRemoteErrorCode.UTE),
        UNEXPECTED_SEGMENT(ViRemoteErrorCode.UTE),
        MESSAGE_SEQUENCE(ViRemoteErrorCode.UTE),
        SEGMENT_TOO_LARGE(ViRemoteErrorCode.UTE),
        RDMA_READ_WINDOW_EXCEEDED(ViRemoteErrorCode.VDE),
        NO_RECEIVE_DESCRIPTOR(ViRemoteErrorCode.VDE),
        RECEIVE_LENGTH(ViRemoteErrorCode.VDE),
        MEMORY_PROTECTION(ViRemoteErrorCode.MPE);

        private final int viErrorType;

        Violation(int viErrorType) {
            this.viErrorType = viErrorType;
        }

        public int viErrorType() {
            return viErrorType;
        }
    }

    private final Violation violation;

    public VitcpProtocolException(Violation violation, String message) {
        super(violation + ": " + message);
        this.violation = violation;
    }

    public Violation violation() {
        return violation;
    }

    public int viErrorType() {
        return violation.viErrorType();
    }
}
