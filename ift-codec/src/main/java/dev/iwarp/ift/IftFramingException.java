package dev.iwarp.ift;

/**
 * A framing error during full operation (F1-F6), fired through {@code exceptionCaught} by
 * {@link IftFramer}; nothing more is delivered after it. For F1-F5 the outbound direction is intact:
 * RDMAP sends a Terminate with {@link #terminateLayer()} 2, {@link #terminateErrorType()} 0 and
 * {@link #terminateErrorCode()}, then closes. F6 (connection lost) can carry nothing.
 */
public class IftFramingException extends IftException {
    private static final long serialVersionUID = 1L;

    /** A framing error with the draft's error it reports. */
    public IftFramingException(IftError error, String message) {
        this(error, message, null);
    }

    /** A framing error with the draft's error it reports, caused by {@code cause}. */
    public IftFramingException(IftError error, String message, Throwable cause) {
        super(check(error), message, cause);
    }

    private static IftError check(IftError error) {
        if (error.isAdaptionError()) {
            throw new IllegalArgumentException(error + " is an adaption error");
        }
        return error;
    }
}
