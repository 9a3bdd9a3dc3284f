package dev.iwarp.ift;

import java.util.Objects;

/**
 * Fired once by {@link IftAdaptionHandler} when the adaption ends: on success with the negotiated
 * {@link IftParameters} (the {@link IftFramer} is then in place), or on failure with the
 * {@link IftAdaptionException} (the connection is being closed).
 */
public final class IftAdaptionCompletionEvent {
    private final IftParameters parameters;
    private final Throwable cause;

    private IftAdaptionCompletionEvent(IftParameters parameters, Throwable cause) {
        this.parameters = parameters;
        this.cause = cause;
    }

    static IftAdaptionCompletionEvent success(IftParameters parameters) {
        return new IftAdaptionCompletionEvent(Objects.requireNonNull(parameters), null);
    }

    static IftAdaptionCompletionEvent failure(Throwable cause) {
        return new IftAdaptionCompletionEvent(null, Objects.requireNonNull(cause));
    }

    /** Whether the adaption completed and framing is in force. */
    public boolean isSuccess() {
        return cause == null;
    }

    /** The negotiated parameters, or {@code null} on failure. */
    public IftParameters parameters() {
        return parameters;
    }

    /** The failure (an {@link IftAdaptionException}), or {@code null} on success. */
    public Throwable cause() {
        return cause;
    }

    @Override
    public String toString() {
        return isSuccess() ? "IftAdaptionCompletionEvent(" + parameters + ")" : "IftAdaptionCompletionEvent(" + cause + ")";
    }
}
