package dev.iwarp.testkit.fuzz;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A fuzzer's raw input read as a few configuration octets followed by a byte stream. Reading past the
 * end yields zeros, so every input (even an empty one) is valid; seed files are easy to write by hand
 * or from captures: the configuration octets, then the octets a peer sent.
 */
public final class FuzzInput {
    private final byte[] data;
    private int pos;

    public FuzzInput(byte[] data) {
        this.data = data;
    }

    /** The next octet as 0..255 (0 past the end). */
    public int u8() {
        return pos < data.length ? data[pos++] & 0xFF : 0;
    }

    /** The next two octets, big-endian. */
    public int u16() {
        return (u8() << 8) | u8();
    }

    /** The next four octets, big-endian. */
    public int u32() {
        return (u16() << 16) | u16();
    }

    /** Up to {@code n} next octets. */
    public byte[] bytes(int n) {
        int k = Math.max(0, Math.min(n, data.length - pos));
        byte[] out = Arrays.copyOfRange(data, pos, pos + k);
        pos += k;
        return out;
    }

    public boolean hasMore() {
        return pos < data.length;
    }

    /** Everything not yet read. */
    public byte[] rest() {
        return bytes(data.length - pos);
    }

    /**
     * {@code stream} cut into the pieces TCP could have delivered: whole when {@code splitSeed} is 0,
     * else pieces of 1..splitSeed octets in a pseudo-random order of sizes drawn from the seed, so the
     * fuzzer explores segmentation with one octet of input.
     */
    public static List<byte[]> split(byte[] stream, int splitSeed) {
        List<byte[]> pieces = new ArrayList<>();
        if (splitSeed == 0 || stream.length == 0) {
            pieces.add(stream);
            return pieces;
        }
        int x = splitSeed * 0x9E3779B1;
        for (int i = 0; i < stream.length; ) {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            int n = Math.min(stream.length - i, 1 + Integer.remainderUnsigned(x, splitSeed));
            pieces.add(Arrays.copyOfRange(stream, i, i + n));
            i += n;
        }
        return pieces;
    }
}
