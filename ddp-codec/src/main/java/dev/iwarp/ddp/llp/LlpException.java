package dev.iwarp.ddp.llp;

import io.netty.handler.codec.DecoderException;

/**
 * An error of the framing (the LLP) during full operation, as RDMAP reports it: a Terminate with
 * Layer 2, this EType and code (RFC 5040 §4.7; for MPA RFC 5044 §8, EType 0), sent only when
 * {@link #streamCanCarryTerminate()} (the outbound direction is still intact, e.g. after a CRC
 * error), then the stream closes. No further ULPDU arrives after it (RFC 5041 §7.1).
 */
public class LlpException extends DecoderException {
    private static final long serialVersionUID = 1L;

    /** Terminate Layer of the LLP (RFC 5040 §4.7). */
    public static final int LAYER = 2;

    private final int errorType;
    private final int errorCode;
    private final boolean streamCanCarryTerminate;

    /**
     * @param errorType               EType within Layer 2 (4 bits)
     * @param errorCode               Error Code (8 bits)
     * @param streamCanCarryTerminate whether a Terminate can still be sent on the stream
     * @param message                 what the peer did, for the log line
     * @param cause                   the framing's own exception, kept for diagnostics
     */
    public LlpException(int errorType, int errorCode, boolean streamCanCarryTerminate, String message,
                        Throwable cause) {
        super(message, cause);
        if ((errorType & ~0xF) != 0 || (errorCode & ~0xFF) != 0) {
            throw new IllegalArgumentException("EType is 4 bits, Error Code 8 bits: " + errorType + "/" + errorCode);
        }
        this.errorType = errorType;
        this.errorCode = errorCode;
        this.streamCanCarryTerminate = streamCanCarryTerminate;
    }

    /** EType within Layer 2. */
    public int errorType() {
        return errorType;
    }

    /** Error Code within the EType. */
    public int errorCode() {
        return errorCode;
    }

    /** Whether RDMAP sends a Terminate for this error before closing. */
    public boolean streamCanCarryTerminate() {
        return streamCanCarryTerminate;
    }
}
