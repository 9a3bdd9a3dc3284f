package dev.iwarp.vitcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/** Known answers for the draft-dicecco-vitcp-01 §3.6 CRC. */
class VitcpCrcTest {

    private static final byte[] CHECK = "123456789".getBytes(StandardCharsets.US_ASCII);

    /** The bitwise reference CRC (tests only), bit by bit as draft-dicecco-vitcp-01 §3.6 describes it. */
    static int reference(byte[] data, int poly, boolean reflected) {
        int c = 0xFFFFFFFF;
        if (reflected) {
            int k = Integer.reverse(poly);
            for (byte b : data) {
                c ^= b & 0xFF;
                for (int i = 0; i < 8; i++) {
                    c = (c & 1) != 0 ? (c >>> 1) ^ k : c >>> 1;
                }
            }
        } else {
            for (byte b : data) {
                c ^= (b & 0xFF) << 24;
                for (int i = 0; i < 8; i++) {
                    c = (c & 0x80000000) != 0 ? (c << 1) ^ poly : c << 1;
                }
            }
        }
        return ~c;
    }

    private static byte[] filled(int n, int v) {
        byte[] b = new byte[n];
        java.util.Arrays.fill(b, (byte) v);
        return b;
    }

    private static byte[] ramp() {
        byte[] b = new byte[32];
        for (int i = 0; i < 32; i++) {
            b[i] = (byte) i;
        }
        return b;
    }

    @Test
    void checkValuesOfBothInterpretations() {
        assertEquals(0xE07E661E, VitcpCrc.compute(VitcpCrcMode.ETHERNET_REFLECTED, CHECK));
        assertEquals(0x3477C647, VitcpCrc.compute(VitcpCrcMode.MSB_FIRST, CHECK));
        // trap C (a misreading of draft-dicecco-vitcp-01 §3.6's bit order): 0xDB710641 fed unreversed into a right-shifting loop; must not be what we compute
        assertEquals(0xC7FB81C2, reference(CHECK, Integer.reverse(0xDB710641), true));
        assertNotEquals(0xC7FB81C2, VitcpCrc.compute(VitcpCrcMode.ETHERNET_REFLECTED, CHECK));
    }

    @Test
    void referenceSanityAgainstJdk() {
        java.util.zip.CRC32 crc32 = new java.util.zip.CRC32();
        crc32.update(CHECK);
        assertEquals((int) crc32.getValue(), reference(CHECK, 0x04C11DB7, true));
        assertEquals(0xCBF43926, reference(CHECK, 0x04C11DB7, true));
    }

    @Test
    void thirtyTwoOctetVectors() {
        VitcpCrcMode a = VitcpCrcMode.ETHERNET_REFLECTED;
        VitcpCrcMode b = VitcpCrcMode.MSB_FIRST;
        assertEquals(0xF2F1998C, VitcpCrc.compute(a, new byte[32]));
        assertEquals(0x31998F4F, VitcpCrc.compute(b, new byte[32]));
        assertEquals(0x654F1871, VitcpCrc.compute(a, filled(32, 0xFF)));
        assertEquals(0x8E18F2A6, VitcpCrc.compute(b, filled(32, 0xFF)));
        assertEquals(0x10A7DB23, VitcpCrc.compute(a, ramp()));
        assertEquals(0x3AD0A6D6, VitcpCrc.compute(b, ramp()));
    }

    @Test
    void wireOctetOrder() {
        ByteBuf out = Unpooled.buffer();
        VitcpCrc.writeCrc(VitcpCrcMode.ETHERNET_REFLECTED, 0xE07E661E, out);
        VitcpCrc.writeCrc(VitcpCrcMode.MSB_FIRST, 0x3477C647, out);
        assertEquals("1e667ee03477c647", io.netty.buffer.ByteBufUtil.hexDump(out));
        out.release();
    }

    @Test
    void residueOverDataAndCrc() {
        // draft-dicecco-vitcp-01 §3.6: CRC over data followed by its own CRC octets gives a constant residue
        for (VitcpCrcMode mode : VitcpCrcMode.values()) {
            int residue = mode == VitcpCrcMode.ETHERNET_REFLECTED ? 0xB9509BB6 : 0x6DD90A9D;
            for (byte[] data : new byte[][] {CHECK, new byte[32], ramp()}) {
                ByteBuf b = Unpooled.buffer().writeBytes(data);
                VitcpCrc.writeCrc(mode, VitcpCrc.compute(mode, data), b);
                int reg = VitcpCrc.update(mode, VitcpCrc.INITIAL, b, 0, b.readableBytes());
                assertEquals(residue, VitcpCrc.finish(reg), mode.name());
                b.release();
            }
        }
    }

    @Test
    void tableMatchesBitwiseReferenceOnManyLengths() {
        java.util.Random r = new java.util.Random(6);
        for (int n = 0; n < 300; n++) {
            byte[] d = new byte[n];
            r.nextBytes(d);
            assertEquals(reference(d, VitcpCrc.POLYNOMIAL, true), VitcpCrc.compute(VitcpCrcMode.ETHERNET_REFLECTED, d));
            assertEquals(reference(d, VitcpCrc.POLYNOMIAL, false), VitcpCrc.compute(VitcpCrcMode.MSB_FIRST, d));
        }
    }

    @Test
    void directAndCompositeBuffersGiveTheSameCrc() {
        byte[] d = ramp();
        ByteBuf direct = Unpooled.directBuffer().writeBytes(d);
        CompositeByteBuf comp = Unpooled.compositeBuffer();
        comp.addComponent(true, Unpooled.wrappedBuffer(d, 0, 10));
        comp.addComponent(true, Unpooled.directBuffer().writeBytes(d, 10, 22));
        for (VitcpCrcMode mode : VitcpCrcMode.values()) {
            int expected = VitcpCrc.compute(mode, d);
            assertEquals(expected, VitcpCrc.compute(mode, direct, 0, 32));
            assertEquals(expected, VitcpCrc.compute(mode, comp, 0, 32));
        }
        direct.release();
        comp.release();
    }

    /**
     * The draft's own recipe (§3.6 a-e): segment with zeroed CRC field, complement the first 32 bits, divide by G(x),
     * complement the remainder. Interpretation B reads bits MSB first; A reads each octet LSB first and maps R(x)
     * back with the x^31 coefficient as bit 0 of the first CRC octet.
     */
    @Test
    void formalPolynomialDivisionEqualsTable() {
        java.util.Random r = new java.util.Random(60);
        BigInteger g = BigInteger.ONE.shiftLeft(32).or(BigInteger.valueOf(0xDB710641L));
        for (int n = 4; n < 80; n += 7) {
            byte[] seg = new byte[n];
            r.nextBytes(seg);
            byte[] withZero = java.util.Arrays.copyOf(seg, n + 4);
            for (boolean reflected : new boolean[] {false, true}) {
                BigInteger m = BigInteger.ZERO;
                int bits = withZero.length * 8;
                for (int i = 0; i < bits; i++) {
                    int octet = withZero[i / 8] & 0xFF;
                    int bit = reflected ? (octet >>> (i % 8)) & 1 : (octet >>> (7 - i % 8)) & 1;
                    if (i < 32) {
                        bit ^= 1; // step b: complement the first 32 bits
                    }
                    m = m.shiftLeft(1).or(BigInteger.valueOf(bit));
                }
                BigInteger rem = mod2(m, g);
                long rx = ~rem.longValue() & 0xFFFFFFFFL; // step e
                int value;
                if (reflected) {
                    // the x^31 coefficient goes first on the wire as bit 0 of the first octet
                    value = Integer.reverse((int) rx);
                } else {
                    value = (int) rx;
                }
                VitcpCrcMode mode = reflected ? VitcpCrcMode.ETHERNET_REFLECTED : VitcpCrcMode.MSB_FIRST;
                assertEquals(value, VitcpCrc.compute(mode, seg), mode + " n=" + n);
            }
        }
    }

    private static BigInteger mod2(BigInteger m, BigInteger g) {
        int gl = g.bitLength();
        while (m.bitLength() >= gl) {
            m = m.xor(g.shiftLeft(m.bitLength() - gl));
        }
        return m;
    }
}
