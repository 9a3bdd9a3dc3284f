package dev.iwarp.rdmap;

/**
 * RDMAP errors (RFC 5040 §4.7 and the IANA "RDMAP Errors" registry): Terminate
 * Layer 0, the EType and Error Code of each.
 */
public enum RdmapError {
    /**
     * Local catastrophic error. The registry accepts any code under EType 0; we send 0xFF, as
     * Linux siw does (siw_qp.c).
     */
    LOCAL_CATASTROPHIC(0x0, 0xFF, "local catastrophic error"),
    INVALID_STAG(0x1, 0x00, "invalid STag"),
    BASE_OR_BOUNDS_VIOLATION(0x1, 0x01, "base or bounds violation"),
    ACCESS_RIGHTS_VIOLATION(0x1, 0x02, "access rights violation"),
    STAG_NOT_ASSOCIATED(0x1, 0x03, "STag not associated with RDMAP stream"),
    TO_WRAP(0x1, 0x04, "TO wrap"),
    /** 0x09 under Remote Protection: siw's choice when the STag is of another PD. */
    REMOTE_PROTECTION_STAG_CANNOT_BE_INVALIDATED(0x1, 0x09, "STag cannot be invalidated"),
    REMOTE_PROTECTION_UNSPECIFIED(0x1, 0xFF, "unspecified error"),
    INVALID_RDMAP_VERSION(0x2, 0x05, "invalid RDMAP version"),
    UNEXPECTED_OPCODE(0x2, 0x06, "unexpected OpCode"),
    CATASTROPHIC_STREAM(0x2, 0x07, "catastrophic error, localized to RDMAP stream"),
    CATASTROPHIC_GLOBAL(0x2, 0x08, "catastrophic error, global"),
    /** 0x09 under Remote Operation: siw's choice for every other reason. */
    REMOTE_OPERATION_STAG_CANNOT_BE_INVALIDATED(0x2, 0x09, "STag cannot be invalidated"),
    REMOTE_OPERATION_UNSPECIFIED(0x2, 0xFF, "unspecified error");

    /** Terminate Layer value of RDMAP. */
    public static final int LAYER = 0;
    /** EType: local catastrophic error. */
    public static final int ETYPE_LOCAL_CATASTROPHIC = 0x0;
    /** EType: remote protection error. */
    public static final int ETYPE_REMOTE_PROTECTION = 0x1;
    /** EType: remote operation error. */
    public static final int ETYPE_REMOTE_OPERATION = 0x2;

    private final int errorType;
    private final int errorCode;
    private final String description;

    RdmapError(int errorType, int errorCode, String description) {
        this.errorType = errorType;
        this.errorCode = errorCode;
        this.description = description;
    }

    public int errorType() {
        return errorType;
    }

    public int errorCode() {
        return errorCode;
    }

    /** The registry's wording, for logs. */
    public String description() {
        return description;
    }

    /** The Terminate cause (Layer 0, this EType and code). */
    public TerminateCause cause() {
        return TerminateCause.of(this);
    }

    /** A one-line text for logs: {@code "RDMAP 0/1/0x00 remote protection error: invalid STag"}. */
    public String describe() {
        return cause().describe();
    }

    /**
     * The error with this EType and code, or {@code null} when unregistered. Any code of EType 0 is a
     * local catastrophic error (the registry says "ALL").
     */
    public static RdmapError find(int errorType, int errorCode) {
        if (errorType == ETYPE_LOCAL_CATASTROPHIC) {
            return LOCAL_CATASTROPHIC;
        }
        for (RdmapError e : values()) {
            if (e.errorType == errorType && e.errorCode == errorCode) {
                return e;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return String.format("%s(0/%d/0x%02x)", name(), errorType, errorCode);
    }
}
