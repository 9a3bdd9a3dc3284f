package dev.iwarp.verbs;

/**
 * A work completion (libibverbs ibv_wc). Immutable.
 */
public final class Completion {
    private final long wrId;
    private final WcStatus status;
    private final WcOpcode opcode;
    private final int byteLength;
    private final int invalidatedStag;
    private final boolean invalidated;
    private final long immediateData;
    private final boolean solicited;
    private final String detail;

    Completion(long wrId, WcStatus status, WcOpcode opcode, int byteLength, boolean invalidated, int invalidatedStag,
               long immediateData, boolean solicited, String detail) {
        this.wrId = wrId;
        this.status = status;
        this.opcode = opcode;
        this.byteLength = byteLength;
        this.invalidated = invalidated;
        this.invalidatedStag = invalidatedStag;
        this.immediateData = immediateData;
        this.solicited = solicited;
        this.detail = detail;
    }

    static Completion success(long wrId, WcOpcode opcode, int byteLength) {
        return new Completion(wrId, WcStatus.SUCCESS, opcode, byteLength, false, 0, 0, false, null);
    }

    static Completion error(long wrId, WcOpcode opcode, WcStatus status, String detail) {
        return new Completion(wrId, status, opcode, 0, false, 0, 0, false, detail);
    }

    static Completion receive(long wrId, WcOpcode opcode, int byteLength, boolean invalidated, int invalidatedStag,
                              long immediateData, boolean solicited) {
        return new Completion(wrId, WcStatus.SUCCESS, opcode, byteLength, invalidated, invalidatedStag, immediateData,
                solicited, null);
    }

    /** The work request id given when posting. */
    public long wrId() {
        return wrId;
    }

    /** How the work request completed. */
    public WcStatus status() {
        return status;
    }

    /** Whether the work request completed successfully ({@link WcStatus#SUCCESS}). */
    public boolean isSuccess() {
        return status == WcStatus.SUCCESS;
    }

    /** What kind of work request completed. */
    public WcOpcode opcode() {
        return opcode;
    }

    /** Octets received (receives), read (RDMA Read) or sent. */
    public int byteLength() {
        return byteLength;
    }

    /** Whether a Send with Invalidate invalidated one of our STags ({@link #invalidatedStag()}). */
    public boolean hasInvalidatedStag() {
        return invalidated;
    }

    /** The STag the peer's Send with Invalidate invalidated, when {@link #hasInvalidatedStag()}. */
    public int invalidatedStag() {
        return invalidatedStag;
    }

    /** RFC 7306 Immediate Data (receives of Immediate Data), or the original value of an atomic. */
    public long immediateData() {
        return immediateData;
    }

    /** The message asked for a solicited event (SE variants). */
    public boolean solicited() {
        return solicited;
    }

    /** For errors: what happened, e.g. the Terminate the peer sent. {@code null} on success. */
    public String detail() {
        return detail;
    }

    @Override
    public String toString() {
        return "Completion{wrId=" + wrId + ", " + status + ", " + opcode + ", " + byteLength + " octets"
                + (invalidated ? String.format(", invalidated STag 0x%08x", invalidatedStag) : "")
                + (detail != null ? ", " + detail : "") + "}";
    }
}
