package dev.iwarp.mpa;

import io.netty.handler.codec.DecoderException;

import java.util.Objects;

/**
 * An MPA protocol error: what the peer did wrong (or what failed locally), with the MPA error code
 * of RFC 5044 §8 / RFC 6581 §6 that a Terminate would carry.
 */
public class MpaException extends DecoderException {
    private static final long serialVersionUID = 1L;

    private final MpaErrorCode errorCode;

    /** An MPA error with the RFC 5044 §8 error code it reports. */
    public MpaException(MpaErrorCode errorCode, String message) {
        super(message);
        this.errorCode = Objects.requireNonNull(errorCode, "errorCode");
    }

    /** An MPA error with the RFC 5044 §8 error code it reports, caused by {@code cause}. */
    public MpaException(MpaErrorCode errorCode, String message, Throwable cause) {
        super(message, cause);
        this.errorCode = Objects.requireNonNull(errorCode, "errorCode");
    }

    /** The MPA error code. */
    public MpaErrorCode errorCode() {
        return errorCode;
    }

    @Override
    public String getMessage() {
        return "MPA error " + errorCode.code() + " (" + errorCode.description() + "): " + super.getMessage();
    }
}
