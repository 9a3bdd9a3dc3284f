package dev.iwarp.mpa;

/**
 * MPA error codes (RFC 5044 §8; codes 5-7 from RFC 6581 §6). On the wire they appear in an RDMAP
 * Terminate with Layer 2 (LLP), EType 0 (MPA) and this value as Error Code.
 */
public enum MpaErrorCode {
    /** 1: TCP connection closed, terminated or lost (RFC 5044 §8). */
    TCP_CONNECTION_LOST(1, "TCP connection closed, terminated or lost"),
    /** 2: received MPA CRC does not match the CRC computed for the FPDU (RFC 5044 §8). */
    CRC_ERROR(2, "received MPA CRC does not match the calculated value"),
    /** 3: CRC valid, but a marker and the ULPDU_Length disagree on an FPDU start (RFC 5044 §8). */
    MARKER_MISMATCH(3, "MPA marker and ULPDU_Length disagree on the FPDU start"),
    /** 4: invalid MPA Request or Reply frame; the TCP connection is closed at once (RFC 5044 §8). */
    INVALID_STARTUP_FRAME(4, "invalid MPA Request or Reply frame"),
    /** 5: local catastrophic error (RFC 6581 §6). */
    LOCAL_CATASTROPHIC(5, "local catastrophic error"),
    /** 6: the Initiator cannot provide an IRD as large as the Responder's ORD (RFC 6581 §6). */
    INSUFFICIENT_IRD(6, "insufficient IRD resources"),
    /** 7: the Reply selects no RTR type the Initiator can send (RFC 6581 §6). */
    NO_MATCHING_RTR(7, "no matching RTR option");

    private final int code;
    private final String description;

    MpaErrorCode(int code, String description) {
        this.code = code;
        this.description = description;
    }

    /** The numeric code carried in a Terminate's Error Code field. */
    public int code() {
        return code;
    }

    /** The spec's name for the error. */
    public String description() {
        return description;
    }

    /** Looks up a code; returns {@code null} for values the RFCs do not define. */
    public static MpaErrorCode valueOf(int code) {
        for (MpaErrorCode c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return name() + "(" + code + ")";
    }
}
