package dev.iwarp.ddp;

/**
 * Access rights of a tagged buffer, as int bit flags (the verbs convention: IBV_ACCESS_*). RFC 5041 §8
 * and RFC 5040 §8: memory is reachable from the peer only through an STag whose rights allow the
 * operation (remote write for RDMA Write, remote read for an RDMA Read's source, local write for the
 * Data Sink of a Read Response).
 */
public final class AccessFlags {
    /** The local ULP may write the buffer, e.g. as the Data Sink of an RDMA Read Response. */
    public static final int LOCAL_WRITE = 1;
    /** The peer may read the buffer (RDMA Read Data Source). */
    public static final int REMOTE_READ = 2;
    /** The peer may write the buffer (RDMA Write Data Sink). */
    public static final int REMOTE_WRITE = 4;
    /** The peer may run atomic operations on the buffer (RFC 7306). */
    public static final int REMOTE_ATOMIC = 8;
    /** Every defined flag. */
    public static final int ALL = LOCAL_WRITE | REMOTE_READ | REMOTE_WRITE | REMOTE_ATOMIC;

    private static final String[] NAMES = {"LOCAL_WRITE", "REMOTE_READ", "REMOTE_WRITE", "REMOTE_ATOMIC"};

    private AccessFlags() {
    }

    /** Whether {@code granted} holds every flag of {@code required}. */
    public static boolean allows(int granted, int required) {
        return (granted & required) == required;
    }

    /**
     * {@code "LOCAL_WRITE|REMOTE_READ"}; {@code "none"} for 0; undefined bits appended in hex
     * ({@code "REMOTE_READ|0x30"}).
     */
    public static String describe(int flags) {
        if (flags == 0) {
            return "none";
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < NAMES.length; i++) {
            if ((flags & (1 << i)) != 0) {
                sb.append(sb.length() == 0 ? "" : "|").append(NAMES[i]);
            }
        }
        int unknown = flags & ~ALL;
        if (unknown != 0) {
            sb.append(sb.length() == 0 ? "" : "|").append("0x").append(Integer.toHexString(unknown));
        }
        return sb.toString();
    }
}
