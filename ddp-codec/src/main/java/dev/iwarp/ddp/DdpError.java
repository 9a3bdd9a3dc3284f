package dev.iwarp.ddp;

/**
 * DDP errors (RFC 5041 §7.2): Terminate Layer 1, the EType and Error Code of each.
 */
public enum DdpError {
    /** Local catastrophic error (error type 0). */
    LOCAL_CATASTROPHIC(0x0, 0x00, "local catastrophic error"),
    /** Tagged buffer error 0x00: the STag is not valid. */
    INVALID_STAG(0x1, 0x00, "invalid STag"),
    /** Tagged buffer error 0x01: the segment falls outside the tagged buffer. */
    BASE_OR_BOUNDS_VIOLATION(0x1, 0x01, "base or bounds violation"),
    /** Tagged buffer error 0x02: the STag is not associated with this DDP stream. */
    STAG_NOT_ASSOCIATED(0x1, 0x02, "STag not associated with DDP stream"),
    /** Tagged buffer error 0x03: the Tagged Offset wraps past 2^64. */
    TO_WRAP(0x1, 0x03, "TO wrap"),
    /** Tagged buffer error 0x04: a DDP version we do not speak. */
    INVALID_DDP_VERSION_TAGGED(0x1, 0x04, "invalid DDP version"),
    /** Untagged buffer error 0x01: no such queue number. */
    INVALID_QN(0x2, 0x01, "invalid QN"),
    /** Untagged buffer error 0x02: no receive buffer posted for this MSN. */
    INVALID_MSN_NO_BUFFER(0x2, 0x02, "invalid MSN - no buffer available"),
    /** Untagged buffer error 0x03: the MSN is outside the valid range. */
    INVALID_MSN_RANGE(0x2, 0x03, "invalid MSN - MSN range is not valid"),
    /** Untagged buffer error 0x04: the Message Offset does not fit the buffer. */
    INVALID_MO(0x2, 0x04, "invalid MO"),
    /** Untagged buffer error 0x05: the message is longer than the posted buffer. */
    MESSAGE_TOO_LONG(0x2, 0x05, "DDP message too long for available buffer"),
    /** Untagged buffer error 0x06: a DDP version we do not speak. */
    INVALID_DDP_VERSION_UNTAGGED(0x2, 0x06, "invalid DDP version");

    /** Terminate Layer value of DDP. */
    public static final int LAYER = 1;

    private final int errorType;
    private final int errorCode;
    private final String description;

    DdpError(int errorType, int errorCode, String description) {
        this.errorType = errorType;
        this.errorCode = errorCode;
        this.description = description;
    }

    /** EType: 0 local catastrophic, 1 tagged buffer, 2 untagged buffer. */
    public int errorType() {
        return errorType;
    }

    /** Error Code within the type. */
    public int errorCode() {
        return errorCode;
    }

    /** The error in RFC 5041 §7.2's words. */
    public String description() {
        return description;
    }

    /**
     * Whether a Terminate for this error carries the DDP segment length and the offending DDP header
     * (M=1, D=1). Not for version errors (header layout unknown) nor local errors (RFC 5040 §4.7).
     */
    public boolean carriesDdpHeader() {
        return this != LOCAL_CATASTROPHIC && this != INVALID_DDP_VERSION_TAGGED && this != INVALID_DDP_VERSION_UNTAGGED;
    }

    @Override
    public String toString() {
        return String.format("%s(1/%d/0x%02x)", name(), errorType, errorCode);
    }
}
