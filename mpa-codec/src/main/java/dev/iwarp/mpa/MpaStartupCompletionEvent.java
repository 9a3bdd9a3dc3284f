package dev.iwarp.mpa;

import java.util.Objects;

/**
 * Fired once by {@link MpaStartupHandler} when startup ends: on success with the negotiated
 * {@link MpaParameters} (the framer is then in place), or on failure with the cause
 * ({@link MpaRejectedException} for R=1, leaving TCP open; {@link MpaException} otherwise).
 */
public final class MpaStartupCompletionEvent {
    private final MpaParameters parameters;
    private final Throwable cause;

    private MpaStartupCompletionEvent(MpaParameters parameters, Throwable cause) {
        this.parameters = parameters;
        this.cause = cause;
    }

    static MpaStartupCompletionEvent success(MpaParameters parameters) {
        return new MpaStartupCompletionEvent(Objects.requireNonNull(parameters), null);
    }

    static MpaStartupCompletionEvent failure(Throwable cause) {
        return new MpaStartupCompletionEvent(null, Objects.requireNonNull(cause));
    }

    public boolean isSuccess() {
        return cause == null;
    }

    /** Whether startup ended with a Reply R=1 (TCP left open). */
    public boolean isRejected() {
        return cause instanceof MpaRejectedException;
    }

    /** The negotiated parameters, or {@code null} on failure. */
    public MpaParameters parameters() {
        return parameters;
    }

    /** The failure, or {@code null} on success. */
    public Throwable cause() {
        return cause;
    }

    @Override
    public String toString() {
        return isSuccess() ? "MpaStartupCompletionEvent(" + parameters + ")"
                : "MpaStartupCompletionEvent(" + cause + ")";
    }
}
