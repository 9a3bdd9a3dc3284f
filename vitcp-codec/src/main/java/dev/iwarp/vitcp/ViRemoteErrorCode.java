package dev.iwarp.vitcp;

/**
 * The 16-bit Remote Error Code: IS Error Code in bits 15..8, VI Error Type bits in 2..0.
 * draft-dicecco-vitcp-01 §3.2 "Remote Error Code", "IS Error Code", "VI Error Type".
 */
public final class ViRemoteErrorCode {

    /** VI Error Type bit 0: RDMA Memory Protection Error. */
    public static final int MPE = 0x1;
    /** VI Error Type bit 1: VI Descriptor Error. */
    public static final int VDE = 0x2;
    /** VI Error Type bit 2: Unrecoverable Transport Error. */
    public static final int UTE = 0x4;

    public static final int NO_ERROR = 0;

    private ViRemoteErrorCode() {
    }

    public static int of(int viErrorType, int isErrorCode) {
        return ((isErrorCode & 0xFF) << 8) | (viErrorType & 0x7);
    }

    public static int viErrorType(int remoteErrorCode) {
        return remoteErrorCode & 0x7;
    }

    public static int isErrorCode(int remoteErrorCode) {
        return (remoteErrorCode >>> 8) & 0xFF;
    }

    /** Bits 7..3 are reserved (§3.2); a receiver ignores them. */
    public static int reservedBits(int remoteErrorCode) {
        return remoteErrorCode & 0xF8;
    }

    public static String describe(int viErrorType) {
        if (viErrorType == 0) {
            return "No Error";
        }
        StringBuilder sb = new StringBuilder();
        if ((viErrorType & MPE) != 0) {
            sb.append("RDMA Memory Protection Error");
        }
        if ((viErrorType & VDE) != 0) {
            sb.append(sb.length() > 0 ? "|" : "").append("VI Descriptor Error");
        }
        if ((viErrorType & UTE) != 0) {
            sb.append(sb.length() > 0 ? "|" : "").append("Unrecoverable Transport Error");
        }
        return sb.toString();
    }
}
