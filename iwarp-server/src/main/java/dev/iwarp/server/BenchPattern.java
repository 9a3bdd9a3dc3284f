package dev.iwarp.server;

import io.netty.buffer.ByteBuf;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The data {@code bench --verify} sends: octet {@code o} of iteration {@code i} on connection {@code c} is a
 * function of (c, i, o) alone, so a receiver or a read-back can check every octet without a copy of what was sent,
 * and stale data from another iteration, another connection or another offset does not pass.
 */
final class BenchPattern {
    private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private BenchPattern() {
    }

    /** Eight octets of the pattern (little-endian), for octets {@code 8 * word .. 8 * word + 7}. */
    static long word(int connection, long iteration, int word) {
        long x = iteration * 0x9E3779B97F4A7C15L ^ ((long) connection << 40) ^ (word + 1L) * 0xC2B2AE3D27D4EB4FL;
        x ^= x >>> 31; // splitmix64 finaliser: neighbouring (c, i, o) give unrelated octets
        x *= 0xBF58476D1CE4E5B9L;
        x ^= x >>> 27;
        x *= 0x94D049BB133111EBL;
        return x ^ x >>> 31;
    }

    /** The expected octet {@code offset} of the message. */
    static byte octet(int connection, long iteration, int offset) {
        return (byte) (word(connection, iteration, offset >>> 3) >>> ((offset & 7) << 3));
    }

    /**
     * Writes the message of (connection, iteration) into {@code buf} at {@code index}, {@code length} octets, built
     * in {@code scratch} (at least {@code length} octets) and placed with one bulk copy: octet by octet, a buffer
     * under Netty's paranoid leak detection records a stack trace per access (minutes for a 256 KiB message).
     */
    static void fill(ByteBuf buf, int index, int length, int connection, long iteration, byte[] scratch) {
        int words = length >>> 3;
        for (int w = 0; w < words; w++) {
            LONG_LE.set(scratch, w << 3, word(connection, iteration, w));
        }
        for (int o = words << 3; o < length; o++) {
            scratch[o] = octet(connection, iteration, o);
        }
        buf.setBytes(index, scratch, 0, length);
    }

    /**
     * Checks the message of (connection, iteration) at {@code buf[index..index+length)}.
     *
     * @return the offset of the first octet that differs, or -1 when all match
     */
    static int firstMismatch(ByteBuf buf, int index, int length, int connection, long iteration, byte[] scratch) {
        buf.getBytes(index, scratch, 0, length); // one bulk copy (see fill)
        int words = length >>> 3;
        for (int w = 0; w < words; w++) {
            long diff = (long) LONG_LE.get(scratch, w << 3) ^ word(connection, iteration, w);
            if (diff != 0) {
                return (w << 3) + (Long.numberOfTrailingZeros(diff) >>> 3);
            }
        }
        for (int o = words << 3; o < length; o++) {
            if (scratch[o] != octet(connection, iteration, o)) {
                return o;
            }
        }
        return -1;
    }
}
