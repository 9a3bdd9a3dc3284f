package dev.iwarp.ift;

import dev.iwarp.testkit.Hex;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The CRC32C self-test vectors of {@code ift_sctp_vectors.py} (catalogue check value, RFC 3720
 * Appendix B.4, the MPA draft's Figure 5 coverage) through {@link Crc32c} over each kind of buffer it
 * handles: heap array, direct NIO view, composite of several NIO buffers; plus the residue.
 */
class Crc32cTest {

    static byte[] input(String which) {
        switch (which) {
            case "check":
                return "123456789".getBytes(StandardCharsets.US_ASCII);
            case "zeros":
                return new byte[32];
            case "ones": {
                byte[] a = new byte[32];
                Arrays.fill(a, (byte) 0xFF);
                return a;
            }
            case "up": {
                byte[] a = new byte[32];
                for (int i = 0; i < 32; i++) {
                    a[i] = (byte) i;
                }
                return a;
            }
            case "down": {
                byte[] a = new byte[32];
                for (int i = 0; i < 32; i++) {
                    a[i] = (byte) (31 - i);
                }
                return a;
            }
            case "iscsi":
                return Hex.parse("01c00000000000000000000000000000 14000000000004000000001400000018"
                        + "28000000000000000200000000000000");
            case "mpafig5":
                return IftVectors.concat(Hex.parse("00000000002a4003000000000000000000000001 00000000"), new byte[24]);
            default:
                return new byte[0];
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "check,   E3069283",
            "zeros,   8A9136AA",
            "ones,    62A8AB43",
            "up,      46DD794E",
            "down,    113FDB5C",
            "iscsi,   D9963A56",
            "mpafig5, 84B3864C",
            "empty,   00000000",
    })
    void scriptVectorsOverHeapDirectAndCompositeBuffers(String which, String hex) {
        int expected = (int) Long.parseLong(hex, 16);
        byte[] a = input(which);
        ByteBuf heap = Unpooled.wrappedBuffer(a);
        ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer(a.length + 3).writeZero(3).writeBytes(a);
        CompositeByteBuf composite = Unpooled.compositeBuffer();
        for (int i = 0; i < a.length; i += 5) {
            composite.addComponent(true, Unpooled.directBuffer(5).writeBytes(a, i, Math.min(5, a.length - i)));
        }
        try {
            assertEquals(expected, Crc32c.compute(heap, 0, a.length), "heap");
            assertEquals(expected, Crc32c.compute(direct, 3, a.length), "direct at an offset");
            assertEquals(expected, Crc32c.compute(composite, 0, a.length), "composite");
            if (a.length > 0) {
                byte[] withCrc = Arrays.copyOf(a, a.length + 4);
                for (int i = 0; i < 4; i++) {
                    withCrc[a.length + i] = (byte) (expected >>> (8 * i)); // least-significant octet first
                }
                assertEquals(Crc32c.RESIDUE, IftTestUtil.crc32c(withCrc, 0, withCrc.length), "residue");
            }
        } finally {
            heap.release();
            direct.release();
            composite.release();
        }
    }
}
