package dev.iwarp.ift;

/**
 * The adaption (the two-phase exchange of indications, IFT draft §4) failed: A1-A10. No Terminate
 * exists for these (RDMAP is not running); the connection is closed.
 */
public class IftAdaptionException extends IftException {
    private static final long serialVersionUID = 1L;

    /** An adaption failure with the draft's error it reports. */
    public IftAdaptionException(IftError error, String message) {
        this(error, message, null);
    }

    /** An adaption failure with the draft's error it reports, caused by {@code cause}. */
    public IftAdaptionException(IftError error, String message, Throwable cause) {
        super(check(error), message, cause);
    }

    private static IftError check(IftError error) {
        if (!error.isAdaptionError()) {
            throw new IllegalArgumentException(error + " is a framing error");
        }
        return error;
    }
}
