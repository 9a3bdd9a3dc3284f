package dev.iwarp.ift;

/**
 * Every error IFT can report: A1-A10 during the adaption (two-phase exchange), F1-F6 during framing.
 *
 * <p>The IFT draft defines no error codes and no Terminate EType. Framing errors carry the Terminate
 * RDMAP sends for them with MPA's LLP codes reused by analogy (Layer 2, EType 0; code 0x01 connection
 * lost, 0x02 CRC error, 0x03 framing error). Adaption errors carry none: RDMAP is not running yet.
 * Errors in DDP and RDMAP headers are DDP's and RDMAP's, not IFT's.
 */
public enum IftError {
    /** A1: the magic number is not 0x52444450 ("RDDP"): not an IFT peer. Malformed; close. */
    NOT_AN_IFT_PEER("A1", "magic number is not 0x52444450 (\"RDDP\"): not an IFT peer"),
    /** A2: the indication's CRC32C does not match octets 0-59 (the CRC is REQUIRED, IFT draft §4.2). Malformed. */
    INDICATION_CRC("A2", "adaption indication CRC mismatch"),
    /** A3: BC version above our version 1: MUST be rejected as incompatible (IFT draft §4.2). Well formed. */
    INCOMPATIBLE_VERSION("A3", "BC version greater than 1: incompatible"),
    /** A4: version 0 or BC version 0, values that do not exist. Malformed. */
    MALFORMED_VERSION("A4", "version or BC version 0"),
    /** A5: node A received phase 0 (A/A mis-start) or node B received phase 1. Malformed. */
    WRONG_PHASE("A5", "wrong phase (mis-start)"),
    /** A6: the R bits differ: MUST be closed in error (IFT draft §4.2 R). Well formed. */
    MODE_MISMATCH("A6", "R bits differ (RDMA mode against DDP mode)"),
    /** A7: the peer's HC/PC choice is unacceptable to local policy (IFT draft §4.2 HC, PC). Well formed. */
    CRC_CHOICE_UNACCEPTABLE("A7", "peer's header/payload CRC choice unacceptable"),
    /** A8: the peer's IH/IP is unacceptable to local policy (IFT draft §4.2 IH, IP). Well formed. */
    CRC_CHECKING_UNACCEPTABLE("A8", "peer ignores CRCs we require it to check"),
    /** A9: no complete indication within the adaption timeout (also the B/B mis-start). */
    ADAPTION_TIMEOUT("A9", "no complete adaption indication within the timeout"),
    /** A10: TCP FIN, RST or error before the adaption completed. */
    ADAPTION_CONNECTION_LOST("A10", "connection lost during the adaption"),

    /** F1: header_size 0 or above the maximum, or payload_size above the maximum. Terminate 2/0/0x03. */
    SIZE_LIMIT("F1", "frame size field out of range", 0x03, true),
    /** F2: header CRC mismatch (when checked). Terminate 2/0/0x02. */
    HEADER_CRC("F2", "header CRC mismatch", 0x02, true),
    /** F3: the frame's receiver VTag is not ours. Terminate 2/0/0x03. */
    VTAG_MISMATCH("F3", "receiver VTag mismatch", 0x03, true),
    /** F4: payload CRC mismatch (when checked). Terminate 2/0/0x02. */
    PAYLOAD_CRC("F4", "payload CRC mismatch", 0x02, true),
    /** F5: header_size differs from the DDP header length its T bit implies (14 or 18). Terminate 2/0/0x03. */
    HEADER_SIZE("F5", "header_size does not match the DDP header", 0x03, true),
    /** F6: TCP FIN or RST inside a frame, or a TCP error: connection lost; no Terminate can be sent (2/0/0x01). */
    CONNECTION_LOST("F6", "connection lost", 0x01, false);

    /** Terminate Layer of every IFT framing error: LLP (RFC 5040 §4.7). */
    public static final int TERMINATE_LAYER = 2;
    /** Terminate EType of every IFT framing error: MPA's 0, reused (IFT defines none). */
    public static final int TERMINATE_ERROR_TYPE = 0;

    private final String id;
    private final String description;
    private final int terminateErrorCode;
    private final boolean streamCanCarryTerminate;

    IftError(String id, String description) {
        this(id, description, -1, false);
    }

    IftError(String id, String description, int terminateErrorCode, boolean streamCanCarryTerminate) {
        this.id = id;
        this.description = description;
        this.terminateErrorCode = terminateErrorCode;
        this.streamCanCarryTerminate = streamCanCarryTerminate;
    }

    /** "A1".."A10", "F1".."F6". */
    public String id() {
        return id;
    }

    /** The error in the draft's words. */
    public String description() {
        return description;
    }

    /** Whether this is an error of the adaption (A1-A10) rather than of framing (F1-F6). */
    public boolean isAdaptionError() {
        return id.charAt(0) == 'A';
    }

    /**
     * Whether the received indication was well formed but unacceptable (A3, A6, A7, A8): node B then
     * sends its own phase 1 before it closes, so that node A learns why (A1, A2, A4, A5: close at once).
     */
    public boolean isWellFormedRejection() {
        return this == INCOMPATIBLE_VERSION || this == MODE_MISMATCH || this == CRC_CHOICE_UNACCEPTABLE
                || this == CRC_CHECKING_UNACCEPTABLE;
    }

    /** Whether RDMAP has a Terminate for this error (the framing errors F1-F6). */
    public boolean hasTerminate() {
        return terminateErrorCode >= 0;
    }

    /** Error Code of the Terminate (Layer 2, EType 0), or -1 for adaption errors. */
    public int terminateErrorCode() {
        return terminateErrorCode;
    }

    /**
     * Whether the stream can still carry a Terminate: true for F1-F5 (the outbound direction is
     * intact), false for F6 and every adaption error.
     */
    public boolean streamCanCarryTerminate() {
        return streamCanCarryTerminate;
    }

    @Override
    public String toString() {
        return id + " " + name();
    }
}
