package dev.iwarp.server.perftest;

import java.nio.ByteBuffer;

/**
 * The fixed control messages besides the version and the dests: page size and cache line (4-octet big-endian ints;
 * both sides then use the larger value), the MTU (an ASCII digit, the IBV_MTU enum, and a NUL), the 56 zero octets
 * of the two barrier messages, and the report: size and iterations as big-endian u64, then bw_peak, bw_avg and
 * msgRate as big-endian IEEE doubles, one 8-octet Send each.
 */
public final class ControlMessages {
    public static final int PAGE_SIZE = 4096;
    public static final int CACHE_LINE = 64;
    /** IBV_MTU_1024, what siw reports. */
    public static final int MTU_ENUM = 3;
    public static final int BARRIER_LENGTH = 56;

    private ControlMessages() {
    }

    public static byte[] int32(int v) {
        return ByteBuffer.allocate(4).putInt(v).array();
    }

    public static int int32(byte[] m, String what) throws PerftestException {
        if (m.length < 4) {
            throw new PerftestException("the peer's " + what + " message has " + m.length + " octets, expected 4");
        }
        return ByteBuffer.wrap(m).getInt(0);
    }

    public static byte[] mtu(int ibvMtuEnum) {
        return new byte[] {(byte) ('0' + ibvMtuEnum), 0};
    }

    /** The MTU in octets for an IBV_MTU enum digit (1 = 256 ... 5 = 4096), or -1. */
    public static int mtuOctets(byte[] m) {
        if (m.length < 1 || m[0] < '1' || m[0] > '5') {
            return -1;
        }
        return 128 << (m[0] - '0');
    }

    public static byte[] barrier() {
        return new byte[BARRIER_LENGTH];
    }

    public static byte[] u64(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    public static long u64(byte[] m) {
        return m.length >= 8 ? ByteBuffer.wrap(m).getLong(0) : m.length >= 4 ? ByteBuffer.wrap(m).getInt(0) & 0xffffffffL : 0;
    }

    public static byte[] float64(double v) {
        return ByteBuffer.allocate(8).putDouble(v).array();
    }

    public static double float64(byte[] m) {
        return m.length >= 8 ? ByteBuffer.wrap(m).getDouble(0) : Double.NaN;
    }
}
