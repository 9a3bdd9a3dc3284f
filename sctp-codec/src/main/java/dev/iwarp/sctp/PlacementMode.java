package dev.iwarp.sctp;

/**
 * The 24-bit Placement Mode of the header extension (draft §2.2) and which sender indications may
 * use it (draft §2.1 and §2.2). Values 4 to 0xFFFFFF are undefined: received, they abort (error C6,
 * our choice: the draft names no action).
 */
public enum PlacementMode {
    /** No direct placement; negotiation or non-placed data (R6, S4). Offset 0. */
    NO_PLACEMENT(0),
    /** Direct placement into the stream's buffer: DDP senders only (R2). */
    DDP(1),
    /** Direct placement into the tagged buffer: DDP_WITH_TAG senders only (R3). */
    DDP_WITH_TAG(2),
    /** RDMA placement: RDMA_ONLY and RDMA_AND_NEGOTIATION senders only (R4). */
    RDMA_PLACEMENT(3);

    /** Largest value of the 24-bit field. */
    public static final int MAX_VALUE = 0xFFFFFF;

    private final int value;

    PlacementMode(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

    /** The mode with this value, or {@code null} for an undefined one. */
    public static PlacementMode of(int value) {
        return value >= 0 && value < 4 ? values()[value] : null;
    }

    /** Whether a sender that indicated {@code indication} may send this mode (the §4.3 matrix). */
    public boolean allowedFor(SctpIndication indication) {
        switch (this) {
            case NO_PLACEMENT:
                return indication != SctpIndication.RDMA_ONLY; // R1, S1
            case DDP:
                return indication == SctpIndication.DDP; // R2
            case DDP_WITH_TAG:
                return indication == SctpIndication.DDP_WITH_TAG; // R3
            case RDMA_PLACEMENT:
                return indication == SctpIndication.RDMA_ONLY
                        || indication == SctpIndication.RDMA_AND_NEGOTIATION; // R4
            default:
                throw new AssertionError(this);
        }
    }

    /** Whether this is a placing mode (R5's path), as opposed to NO_PLACEMENT (R6's path). */
    public boolean places() {
        return this != NO_PLACEMENT;
    }
}
