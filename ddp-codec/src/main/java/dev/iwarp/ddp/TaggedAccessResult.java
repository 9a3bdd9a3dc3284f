package dev.iwarp.ddp;

/**
 * Outcome of {@link TaggedBufferTable#check}: the first failing step of the Data Sink's tagged-buffer
 * validation (RFC 5041 §7.1), or {@link #OK}.
 */
public enum TaggedAccessResult {
    /** Every check passed: the access may be performed. */
    OK(null),
    /**
     * Step 1: STag unknown, key mismatch, invalidated, or registered in another protection domain than
     * the stream's (deliberately not told apart: RFC 5042, see {@link TaggedBufferTable#check}).
     */
    INVALID_STAG(DdpError.INVALID_STAG),
    /**
     * Step 2: the STag lacks a required right. RFC 5041 has no DDP code for it (RDMAP has Remote
     * Protection 0x02); Linux siw reports it as DDP Invalid STag, and so does {@link #ddpError()}.
     */
    ACCESS_RIGHTS(DdpError.INVALID_STAG),
    /** Step 3: {@code TO < base} or {@code TO + length > base + length of the buffer}. */
    BASE_OR_BOUNDS(DdpError.BASE_OR_BOUNDS_VIOLATION),
    /** Step 4: the access runs past TO 2<sup>64</sup>−1. */
    TO_WRAP(DdpError.TO_WRAP);

    private final DdpError ddpError;

    TaggedAccessResult(DdpError ddpError) {
        this.ddpError = ddpError;
    }

    /** Whether the access may go ahead. */
    public boolean isOk() {
        return this == OK;
    }

    /**
     * The DDP Tagged Buffer Error (Terminate Layer 1, EType 1) to report for a failed RDMA Write or
     * Read Response placement: INVALID_STAG→0x00, BASE_OR_BOUNDS→0x01, TO_WRAP→0x03,
     * ACCESS_RIGHTS→0x00 (as siw; siw_qp_rx.c). RDMAP, validating a Read
     * Request's source, reports its own Remote Protection codes instead.
     *
     * @throws IllegalStateException for {@link #OK}
     */
    public DdpError ddpError() {
        if (ddpError == null) {
            throw new IllegalStateException("OK is not an error");
        }
        return ddpError;
    }
}
