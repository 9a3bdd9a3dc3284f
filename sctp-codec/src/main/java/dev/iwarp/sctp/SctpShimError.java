package dev.iwarp.sctp;

/**
 * Every error of the shim (the draft names no errors;
 * these are the module's, listed in its README): indication errors I1-I4 and chunk errors C1-C12 (C13, DDP
 * and RDMAP errors, belong to those layers). {@link #aborts()} says whether the association is aborted
 * (SCTP ABORT, no Terminate: the peer's shim is broken and a Terminate would ride the same framing)
 * or closed gracefully.
 */
public enum SctpShimError {
    I1("peer did not indicate an adaptation", false),
    I2("peer's indication unacceptable to the local ULP", false),
    I3("malformed or second Adaptation Hello", true),
    I4("too much received before the peer's Adaptation Hello", true),
    C1("message shorter than the sender's header extension", true),
    C2("NO_PLACEMENT_MODE from an RDMA_ONLY sender (R1)", true),
    C3("DDP_MODE from a sender that did not indicate DDP (R2)", true),
    C4("DDP_WITH_TAG_MODE from a sender that did not indicate DDP_WITH_TAG (R3)", true),
    C5("RDMA_PLACEMENT_MODE from a sender that indicated neither RDMA_ONLY nor RDMA_AND_NEGOTIATION (R4)", true),
    C6("unknown placement mode", true),
    C7("placement specification incorrect (R5)", true),
    C8("header extension disagrees with the DDP header", true),
    C9("AWS duplicate, behind the cumulative AWS, or beyond the reorder window", true),
    C10("message larger than the maximum chunk user data", true),
    C11("local send refused: message larger than the fragmentation point", true),
    C12("association lost, shut down or send failed", false),
    /** Local misuse of the sender rules: the message is refused, the association is untouched. */
    S1("NO_PLACEMENT_MODE refused: we indicated RDMA_ONLY (S1)", false),
    S2("placement refused: we indicated RDMA_NEGOTIATION (S2)", false),
    S3("placement mode refused: our indication does not allow it", false);

    private final String description;
    private final boolean aborts;

    SctpShimError(String description, boolean aborts) {
        this.description = description;
        this.aborts = aborts;
    }

    public String id() {
        return name();
    }

    public String description() {
        return description;
    }

    /** Whether the association is aborted (SO_LINGER 0 + close: SCTP ABORT) for this error. */
    public boolean aborts() {
        return aborts;
    }

    /** Whether this is a local refusal to send (S1-S3): the message fails, nothing else happens. */
    public boolean isSendRefusal() {
        return name().startsWith("S");
    }
}
