package dev.iwarp.framing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * CRC32C known answers (RFC 3720 Appendix B.4, the catalogue check value, the MPA draft's Figure 5
 * coverage) through {@link Crc32c} over each kind of buffer it handles: heap array, direct NIO view at
 * an offset, composite of several NIO buffers; the octets as they go on the wire; and the residue.
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
                return HexFormat.of().parseHex("01c00000000000000000000000000000" + "14000000000004000000001400000018"
                        + "28000000000000000200000000000000");
            case "mpafig5":
                return Arrays.copyOf(HexFormat.of().parseHex("00000000002a400300000000000000000000000100000000"), 48);
            default:
                return new byte[0];
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "check,   E3069283, 839206e3",
            "zeros,   8A9136AA, aa36918a",
            "ones,    62A8AB43, 43aba862",
            "up,      46DD794E, 4e79dd46",
            "down,    113FDB5C, 5cdb3f11",
            "iscsi,   D9963A56, 563a96d9",
            "mpafig5, 84B3864C, 4c86b384",
            "empty,   00000000, 00000000",
    })
    void knownAnswersOverHeapDirectAndCompositeBuffers(String which, String hex, String wireHex) {
        int expected = (int) Long.parseLong(hex, 16);
        byte[] a = input(which);
        ByteBuf heap = Unpooled.wrappedBuffer(a);
        ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer(a.length + 3).writeZero(3).writeBytes(a);
        CompositeByteBuf composite = Unpooled.compositeBuffer();
        for (int i = 0; i < a.length; i += 5) {
            composite.addComponent(true, Unpooled.directBuffer(5).writeBytes(a, i, Math.min(5, a.length - i)));
        }
        ByteBuf wire = Unpooled.buffer(4);
        try {
            assertEquals(expected, Crc32c.compute(heap, 0, a.length), "heap");
            assertEquals(expected, Crc32c.compute(direct, 3, a.length), "direct at an offset");
            assertEquals(expected, Crc32c.compute(composite, 0, a.length), "composite");
            wire.writeIntLE(Crc32c.compute(heap, 0, a.length));
            assertArrayEquals(HexFormat.of().parseHex(wireHex.replace(" ", "")), Arrays.copyOf(wire.array(), 4),
                    "least-significant octet first on the wire");
            if (a.length > 0) {
                ByteBuf withCrc = Unpooled.buffer().writeBytes(a).writeIntLE(expected);
                try {
                    assertEquals(Crc32c.RESIDUE, Crc32c.compute(withCrc, 0, withCrc.readableBytes()), "residue");
                } finally {
                    withCrc.release();
                }
            }
        } finally {
            heap.release();
            direct.release();
            composite.release();
            wire.release();
        }
    }
}
