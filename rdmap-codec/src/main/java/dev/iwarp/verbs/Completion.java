package dev.iwarp.verbs;

/**
 * A work completion (libibverbs ibv_wc). Immutable: it may be kept.
 */
public final class Completion implements CompletionView {
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

    static Completion success(long wrId, WcOpcode opcode, int byteLength, boolean invalidated, int invalidatedStag,
                              long immediateData, boolean solicited) {
        return new Completion(wrId, WcStatus.SUCCESS, opcode, byteLength, invalidated, invalidatedStag, immediateData,
                solicited, null);
    }

    @Override
    public long wrId() {
        return wrId;
    }

    @Override
    public WcStatus status() {
        return status;
    }

    @Override
    public boolean isSuccess() {
        return status == WcStatus.SUCCESS;
    }

    @Override
    public WcOpcode opcode() {
        return opcode;
    }

    @Override
    public int byteLength() {
        return byteLength;
    }

    @Override
    public boolean hasInvalidatedStag() {
        return invalidated;
    }

    @Override
    public int invalidatedStag() {
        return invalidatedStag;
    }

    @Override
    public long immediateData() {
        return immediateData;
    }

    @Override
    public boolean solicited() {
        return solicited;
    }

    @Override
    public String detail() {
        return detail;
    }

    @Override
    public Completion toCompletion() {
        return this;
    }

    @Override
    public String toString() {
        return "Completion{wrId=" + wrId + ", " + status + ", " + opcode + ", " + byteLength + " octets"
                + (invalidated ? String.format(", invalidated STag 0x%08x", invalidatedStag) : "")
                + (detail != null ? ", " + detail : "") + "}";
    }
}
