package dev.iwarp.mpa;

import dev.iwarp.testkit.Hex;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** CRC32C known answers: RFC 3720 Appendix B.4, octets as they appear on the wire. */
class Crc32cTest {

    private static byte[] wire(ByteBuf holder) {
        ByteBuf out = Unpooled.buffer(4);
        int crc = Crc32c.compute(holder, holder.readerIndex(), holder.readableBytes());
        out.writeIntLE(crc);
        byte[] b = new byte[4];
        out.readBytes(b);
        return b;
    }

    private static void check(byte[] data, String expectedWire, int expectedValue) {
        for (ByteBuf buf : new ByteBuf[] {Unpooled.wrappedBuffer(data), Unpooled.directBuffer().writeBytes(data),
                Unpooled.wrappedBuffer(Unpooled.wrappedBuffer(data, 0, data.length / 2),
                        Unpooled.wrappedBuffer(data, data.length / 2, data.length - data.length / 2))}) {
            try {
                assertEquals(expectedValue, Crc32c.compute(buf, buf.readerIndex(), buf.readableBytes()), buf.toString());
                assertArrayEquals(Hex.parse(expectedWire), wire(buf));
            } finally {
                buf.release();
            }
        }
    }

    @Test
    void rfc3720ZeroBytes() {
        check(new byte[32], "aa 36 91 8a", 0x8A9136AA);
    }

    @Test
    void rfc3720OnesBytes() {
        byte[] d = new byte[32];
        java.util.Arrays.fill(d, (byte) 0xFF);
        check(d, "43 ab a8 62", 0x62A8AB43);
    }

    @Test
    void rfc3720Incrementing() {
        byte[] d = new byte[32];
        for (int i = 0; i < 32; i++) {
            d[i] = (byte) i;
        }
        check(d, "4e 79 dd 46", 0x46DD794E);
    }

    @Test
    void rfc3720Decrementing() {
        byte[] d = new byte[32];
        for (int i = 0; i < 32; i++) {
            d[i] = (byte) (31 - i);
        }
        check(d, "5c db 3f 11", 0x113FDB5C);
    }

    @Test
    void rfc3720IscsiReadCommand() {
        byte[] d = Hex.parse("01 c0 00 00  00 00 00 00  00 00 00 00  00 00 00 00"
                + "14 00 00 00  00 00 04 00  00 00 00 14  00 00 00 18"
                + "28 00 00 00  00 00 00 00  02 00 00 00  00 00 00 00");
        check(d, "56 3a 96 d9", 0xD9963A56);
    }

    @Test
    void catalogueCheckValue() {
        check("123456789".getBytes(StandardCharsets.US_ASCII), "83 92 06 e3", 0xE3069283);
    }

    @Test
    void residueOverDataAndItsCrc() {
        byte[] data = "123456789".getBytes(StandardCharsets.US_ASCII);
        ByteBuf b = Unpooled.buffer().writeBytes(data).writeIntLE(0xE3069283);
        try {
            assertEquals(Crc32c.RESIDUE, Crc32c.compute(b, 0, b.readableBytes()));
            CRC32C ref = new CRC32C();
            ref.update(data);
            assertEquals(0xE3069283, (int) ref.getValue());
        } finally {
            b.release();
        }
    }
}
