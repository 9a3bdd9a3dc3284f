package dev.iwarp.ift;

import dev.iwarp.testkit.Splits;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Arrays;
import java.util.zip.CRC32C;

import static dev.iwarp.ift.IftVectors.AI1;
import static dev.iwarp.ift.IftVectors.AI2;
import static dev.iwarp.ift.IftVectors.AI3;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link IftAdaptionIndication} against the vectors AI-1..AI-3 (encode byte-exact, decode fed in every
 * split), every flag's bit position, the fields the receiver ignores, and the two format errors (A1
 * magic, A2 CRC).
 */
class IftAdaptionIndicationTest {

    static IftAdaptionIndication ai1() {
        return IftAdaptionIndication.builder().flag(IftFlag.R, true).flag(IftFlag.HC, true).flag(IftFlag.PC, true)
                .senderVTag(IftVectors.VTAG_A).build();
    }

    static IftAdaptionIndication ai2() {
        return IftAdaptionIndication.builder().flags(0xF0000000).senderVTag(IftVectors.VTAG_B).build();
    }

    static IftAdaptionIndication ai3() {
        return IftAdaptionIndication.builder().flag(IftFlag.HC, true).flag(IftFlag.IP, true).flag(IftFlag.SP, true)
                .senderVTag(0x0F0F).build();
    }

    @Test
    void vectorsEncodeByteExactWithTheirCrcs() {
        assertArrayEquals(AI1, ai1().toByteArray());
        assertArrayEquals(AI2, ai2().toByteArray());
        assertArrayEquals(AI3, ai3().toByteArray());
        assertEquals(IftVectors.AI1_CRC, ai1().crc());
        assertEquals(IftVectors.AI2_CRC, ai2().crc());
        assertEquals(IftVectors.AI3_CRC, ai3().crc());
        ByteBuf out = Unpooled.buffer();
        ai1().encode(out);
        assertEquals(64, out.readableBytes());
        assertEquals(IftAdaptionIndication.MAGIC, out.getInt(0));
        out.release();
    }

    @Test
    void ai1FieldsAsTheScriptDescribesThem() {
        IftAdaptionIndication i = decodeWhole(AI1);
        assertEquals(1, i.version());
        assertEquals(1, i.bcVersion());
        assertEquals(0x70000000, i.flags());
        assertEquals(0, i.phase());
        assertTrue(i.rdmaMode() && i.sendsHeaderCrc() && i.sendsPayloadCrc());
        assertFalse(i.ignoresHeaderCrc() || i.ignoresPayloadCrc() || i.permitsSpeculativePlacement()
                || i.willSendMarkers() || i.wantsMarkers());
        assertEquals(0x1A2B, i.senderVTag());
        assertEquals(0, i.markerInterval());
        assertEquals(ai1(), i);

        IftAdaptionIndication b = decodeWhole(AI2);
        assertEquals(1, b.phase());
        assertEquals(0xC3D4, b.senderVTag());
        IftAdaptionIndication c = decodeWhole(AI3);
        assertFalse(c.rdmaMode());
        assertTrue(c.sendsHeaderCrc() && !c.sendsPayloadCrc() && c.ignoresPayloadCrc() && c.permitsSpeculativePlacement());
    }

    static IftAdaptionIndication decodeWhole(byte[] v) {
        ByteBuf b = Unpooled.wrappedBuffer(v.clone());
        try {
            IftAdaptionIndication i = IftAdaptionIndication.decode(b);
            assertNotNull(i);
            assertFalse(b.isReadable());
            return i;
        } finally {
            b.release();
        }
    }

    @Test
    void decodesEachVectorSplitAtEveryByteBoundaryAndNotBeforeItsLastOctet() {
        for (byte[] v : new byte[][] {AI1, AI2, AI3}) {
            Splits.forEachSplit(v, pieces -> {
                ByteBuf cumulation = Unpooled.buffer();
                IftAdaptionIndication got = null;
                int fed = 0;
                for (ByteBuf piece : pieces) {
                    fed += piece.readableBytes();
                    cumulation.writeBytes(piece);
                    piece.release();
                    if (got != null) {
                        continue; // an empty last piece
                    }
                    got = IftAdaptionIndication.decode(cumulation);
                    assertEquals(fed == 64, got != null, "complete exactly at octet 64, fed " + fed);
                }
                assertNotNull(got);
                assertArrayEquals(v, got.toByteArray());
                assertFalse(cumulation.isReadable());
                cumulation.release();
            });
        }
    }

    @Test
    void decodeReadsExactly64Octets() {
        ByteBuf b = Unpooled.wrappedBuffer(IftVectors.concat(AI2, IftVectors.F1));
        assertEquals(ai2(), IftAdaptionIndication.decode(b));
        assertEquals(IftVectors.F1.length, b.readableBytes());
        b.release();
    }

    @ParameterizedTest
    @EnumSource(IftFlag.class)
    void eachFlagHasTheBitTheDraftGivesIt(IftFlag flag) {
        // IFT draft §4.2: flags "starting with the MSB of the flag field and proceeding left to right"
        int bit = flag.ordinal();
        assertEquals(0x80000000 >>> bit, flag.mask());
        byte[] a = IftAdaptionIndication.builder().flag(flag, true).build().toByteArray();
        int octet = 8 + bit / 8;
        for (int o = 8; o < 12; o++) {
            assertEquals(o == octet ? 0x80 >>> (bit % 8) : 0, a[o] & 0xFF, "octet " + o);
        }
        IftAdaptionIndication back = decodeWhole(a);
        for (IftFlag f : IftFlag.values()) {
            assertEquals(f == flag, back.has(f), f.name());
        }
        assertEquals(0, back.reservedFlags());
    }

    @Test
    void reservedFlagsReservedOctetsAndMarkerIntervalSurviveAndAreCrcCovered() {
        byte[] reserved = new byte[44];
        Arrays.fill(reserved, (byte) 0xA5);
        IftAdaptionIndication odd = ai1().toBuilder().flags(0x70000000 | IftFlag.RESERVED_MASK).markerInterval(512)
                .reserved(reserved).build();
        byte[] a = odd.toByteArray();
        CRC32C c = new CRC32C();
        c.update(a, 0, 60);
        assertEquals((int) c.getValue(), odd.crc());
        assertTrue(odd.crc() != IftVectors.AI1_CRC);
        IftAdaptionIndication back = decodeWhole(a);
        assertEquals(IftFlag.RESERVED_MASK, back.reservedFlags());
        assertEquals(512, back.markerInterval());
        assertArrayEquals(reserved, back.reserved());
        assertTrue(back.hasNonZeroReservedOctets());
        assertEquals(odd, back);
    }

    @Test
    void wrongMagicIsA1AtTheFirstWrongOctet() {
        ByteBuf http = Unpooled.copiedBuffer("G".getBytes());
        IftAdaptionException e = assertThrows(IftAdaptionException.class, () -> IftAdaptionIndication.decode(http));
        assertEquals(IftError.NOT_AN_IFT_PEER, e.error());
        http.release();

        ByteBuf partial = Unpooled.wrappedBuffer(new byte[] {0x52, 0x44, 0x44});
        assertNull(IftAdaptionIndication.decode(partial), "a correct prefix waits for more");
        partial.release();

        byte[] bad = AI1.clone();
        bad[3] = 0x51; // "RDDQ"
        ByteBuf b = Unpooled.wrappedBuffer(bad);
        e = assertThrows(IftAdaptionException.class, () -> IftAdaptionIndication.decode(b));
        assertEquals(IftError.NOT_AN_IFT_PEER, e.error());
        assertEquals(-1, e.terminateErrorCode());
        assertFalse(e.streamCanCarryTerminate());
        b.release();
    }

    @Test
    void corruptedOctetIsA2AndABigEndianCrcIsNamedAsSuch() {
        for (int i = 4; i < 64; i++) {
            byte[] bad = AI1.clone();
            bad[i] ^= 0x01;
            ByteBuf b = Unpooled.wrappedBuffer(bad);
            IftAdaptionException e = assertThrows(IftAdaptionException.class, () -> IftAdaptionIndication.decode(b));
            assertEquals(IftError.INDICATION_CRC, e.error(), "octet " + i);
            assertFalse(b.isReadable(), "the 64 octets are consumed");
            b.release();
        }
        byte[] be = AI1.clone();
        be[60] = (byte) 0xe3; // the script's "big-endian reading": e3 96 50 21
        be[61] = (byte) 0x96;
        be[62] = (byte) 0x50;
        be[63] = (byte) 0x21;
        ByteBuf b = Unpooled.wrappedBuffer(be);
        IftAdaptionException e = assertThrows(IftAdaptionException.class, () -> IftAdaptionIndication.decode(b));
        assertEquals(IftError.INDICATION_CRC, e.error());
        assertTrue(e.getMessage().contains("most-significant octet first"), e.getMessage());
        assertTrue(e.getMessage().startsWith("IFT A2 "), e.getMessage());
        b.release();
    }

    @Test
    void versionZeroIsStillAnIndicationTheNegotiationRefusesIt() {
        IftAdaptionIndication v0 = decodeWhole(ai1().toBuilder().version(0).build().toByteArray());
        assertEquals(0, v0.version());
        assertThrows(IllegalArgumentException.class, () -> IftAdaptionIndication.builder().senderVTag(0x10000));
        assertThrows(IllegalArgumentException.class, () -> IftAdaptionIndication.builder().bcVersion(-1));
        assertThrows(IllegalArgumentException.class, () -> IftAdaptionIndication.builder().reserved(new byte[43]));
    }

    @Test
    void describeNamesTheFlags() {
        assertEquals("R|HC|PC", IftFlag.describe(0x70000000));
        assertEquals("none", IftFlag.describe(0));
        assertEquals("PH|RM|reserved 0x000001", IftFlag.describe(0x80800001));
        assertTrue(ai2().toString().contains("phase 1") && ai2().toString().contains("0xC3D4"), ai2().toString());
    }

    @Test
    void anAllZeroReservedAreaIsSharedAndStillReadsAsGiven() {
        IftAdaptionIndication built = IftAdaptionIndication.builder().senderVTag(0x1234).build();
        ByteBuf wire = Unpooled.buffer(IftAdaptionIndication.LENGTH);
        try {
            built.encode(wire);
            IftAdaptionIndication decoded = IftAdaptionIndication.decode(wire);
            assertFalse(built.ownsZeroReservedArea(), "an idle connection keeps two indications: no 44 octets each");
            assertFalse(decoded.ownsZeroReservedArea(), "decoded too");
            assertArrayEquals(new byte[IftAdaptionIndication.RESERVED_LENGTH], decoded.reserved());
            decoded.reserved()[0] = 1; // a copy: the shared area stays zero
            assertFalse(decoded.hasNonZeroReservedOctets());
            assertFalse(IftAdaptionIndication.builder().build().hasNonZeroReservedOctets());
            assertEquals(built, decoded);
        } finally {
            wire.release();
        }
        byte[] odd = new byte[IftAdaptionIndication.RESERVED_LENGTH];
        odd[43] = 7;
        IftAdaptionIndication withOctets = IftAdaptionIndication.builder().reserved(odd).build();
        assertTrue(withOctets.hasNonZeroReservedOctets());
        assertArrayEquals(odd, withOctets.reserved());
    }
}
