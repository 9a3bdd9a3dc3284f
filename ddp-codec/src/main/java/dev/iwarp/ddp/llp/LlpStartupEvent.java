package dev.iwarp.ddp.llp;

import java.util.Objects;

/**
 * Fired once through the pipeline when the framing's startup ends: on success with the negotiated
 * {@link LlpParameters} and the {@link LlpStream} handle (full operation: ULPDUs flow), on
 * failure with the cause (the framing's own exception; the connection may stay open, e.g. after an
 * MPA rejection). RDMAP enters RTS, or flushes what was posted, on this event.
 */
public final class LlpStartupEvent {
    private final LlpParameters parameters;
    private final LlpStream lowerLayer;
    private final Throwable cause;

    private LlpStartupEvent(LlpParameters parameters, LlpStream lowerLayer, Throwable cause) {
        this.parameters = parameters;
        this.lowerLayer = lowerLayer;
        this.cause = cause;
    }

    public static LlpStartupEvent success(LlpParameters parameters, LlpStream lowerLayer) {
        return new LlpStartupEvent(Objects.requireNonNull(parameters, "parameters"),
                Objects.requireNonNull(lowerLayer, "lowerLayer"), null);
    }

    public static LlpStartupEvent failure(Throwable cause) {
        return new LlpStartupEvent(null, null, Objects.requireNonNull(cause, "cause"));
    }

    public boolean isSuccess() {
        return cause == null;
    }

    /** The negotiated parameters, or {@code null} on failure. */
    public LlpParameters parameters() {
        return parameters;
    }

    /** The framing's operations, or {@code null} on failure. */
    public LlpStream lowerLayer() {
        return lowerLayer;
    }

    /** The failure, or {@code null} on success. */
    public Throwable cause() {
        return cause;
    }

    @Override
    public String toString() {
        return "LlpStartupEvent(" + (isSuccess() ? parameters : cause) + ")";
    }
}
