package dev.iwarp.ift;

import io.netty.handler.codec.DecoderException;

import java.util.Objects;

/**
 * An IFT error: what the peer did (or what failed), with the {@link IftError} reason and, for framing
 * errors, the Terminate RDMAP sends for it. Fired through {@code exceptionCaught} during framing and
 * carried by the failed {@link IftAdaptionCompletionEvent} during the adaption.
 */
public abstract class IftException extends DecoderException {
    private static final long serialVersionUID = 1L;

    private final IftError error;

    IftException(IftError error, String message, Throwable cause) {
        super(message, cause);
        this.error = Objects.requireNonNull(error, "error");
    }

    /** The reason (A1-A10 or F1-F6). */
    public IftError error() {
        return error;
    }

    /** Terminate Layer: 2 (LLP) for framing errors, -1 for adaption errors (no Terminate). */
    public int terminateLayer() {
        return error.hasTerminate() ? IftError.TERMINATE_LAYER : -1;
    }

    /** Terminate EType: 0 (MPA's, reused) for framing errors, -1 for adaption errors. */
    public int terminateErrorType() {
        return error.hasTerminate() ? IftError.TERMINATE_ERROR_TYPE : -1;
    }

    /** Terminate Error Code (0x01, 0x02 or 0x03) for framing errors, -1 for adaption errors. */
    public int terminateErrorCode() {
        return error.terminateErrorCode();
    }

    /** Whether a Terminate can still be sent on this stream (F1-F5). */
    public boolean streamCanCarryTerminate() {
        return error.streamCanCarryTerminate();
    }

    @Override
    public String getMessage() {
        return "IFT " + error.id() + " (" + error.description() + "): " + super.getMessage();
    }
}
