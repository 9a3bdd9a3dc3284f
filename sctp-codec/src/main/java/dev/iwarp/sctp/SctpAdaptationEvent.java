package dev.iwarp.sctp;

import java.util.Objects;

/**
 * Fired once by {@link SctpAdaptationHandler} when the indications are known: success with the
 * {@link SctpAdaptation} (enabled, and the peer's value acceptable to the ULP), or failure with an
 * {@link SctpShimException} (I1 no indication, I2 unacceptable, I3/I4 broken hello).
 */
public final class SctpAdaptationEvent {
    private final SctpAdaptation adaptation;
    private final Throwable cause;

    private SctpAdaptationEvent(SctpAdaptation adaptation, Throwable cause) {
        this.adaptation = adaptation;
        this.cause = cause;
    }

    public static SctpAdaptationEvent success(SctpAdaptation adaptation) {
        return new SctpAdaptationEvent(Objects.requireNonNull(adaptation), null);
    }

    public static SctpAdaptationEvent failure(SctpAdaptation adaptation, Throwable cause) {
        return new SctpAdaptationEvent(adaptation, Objects.requireNonNull(cause));
    }

    public boolean isSuccess() {
        return cause == null;
    }

    /** What was indicated (also on failure, when known), or {@code null}. */
    public SctpAdaptation adaptation() {
        return adaptation;
    }

    public Throwable cause() {
        return cause;
    }

    @Override
    public String toString() {
        return "SctpAdaptationEvent(" + (isSuccess() ? adaptation : cause.getMessage()) + ")";
    }
}
