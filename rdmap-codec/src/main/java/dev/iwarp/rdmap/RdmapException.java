package dev.iwarp.rdmap;

import java.util.Objects;

/**
 * An error the peer caused on an RDMAP stream (RFC 5040 §7): the Terminate cause to report, the Read
 * Request header to quote when the table of RFC 5040 §4.7 asks for it, and what happened, for the log
 * line. The engine answers it with a Terminate and closes the stream.
 */
public final class RdmapException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final TerminateCause cause;
    private final transient ReadRequestHeader readRequest;

    public RdmapException(TerminateCause cause, String message) {
        this(cause, null, message);
    }

    /** @param readRequest the offending Read Request's header, or {@code null} */
    public RdmapException(TerminateCause cause, ReadRequestHeader readRequest, String message) {
        super(message, null, false, false); // control flow for a peer's error: no stack trace
        this.cause = Objects.requireNonNull(cause, "cause");
        this.readRequest = readRequest;
    }

    public RdmapException(RdmapError error, String message) {
        this(TerminateCause.of(error), null, message);
    }

    /** The Terminate's Layer, EType and code. */
    public TerminateCause terminateCause() {
        return cause;
    }

    /** The Read Request header to quote, or {@code null}. */
    public ReadRequestHeader readRequest() {
        return readRequest;
    }
}
