package dev.iwarp.sctp;

import io.netty.handler.codec.DecoderException;

import java.util.Objects;

/**
 * A shim error: what the peer did (or what we were asked to send), with its {@link SctpShimError}
 * (I1-I4, C1-C12, S1-S3). Fired through {@code exceptionCaught} for received messages (after the
 * association was aborted when {@link SctpShimError#aborts()}), used to fail the write promise for
 * refused sends, and carried by a failed {@link SctpAdaptationEvent}.
 */
public class SctpShimException extends DecoderException {
    private static final long serialVersionUID = 1L;

    private final SctpShimError error;

    public SctpShimException(SctpShimError error, String message) {
        super(message);
        this.error = Objects.requireNonNull(error, "error");
    }

    public SctpShimError error() {
        return error;
    }

    /** Whether the association is (being) aborted for it. */
    public boolean aborts() {
        return error.aborts();
    }

    @Override
    public String getMessage() {
        return "SCTP adaptation " + error.id() + " (" + error.description() + "): " + super.getMessage();
    }
}
