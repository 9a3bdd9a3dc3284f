package dev.iwarp.mpa;

import dev.iwarp.testkit.Hex;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Known answers for the MPA Request/Reply format (RFC 5044 §7.1.1, RFC 6581 §2; byte vectors of
 * RFC 5044 §7.1.1 and RFC 6581 §5), encoded and decoded byte for byte, every vector also
 * decoded from every prefix to check that an incomplete frame consumes nothing.
 */
class MpaStartupFrameTest {
    static final String REQ_KEY = "4D 50 41 20 49 44 20 52 65 71 20 46 72 61 6D 65";
    static final String REP_KEY = "4D 50 41 20 49 44 20 52 65 70 20 46 72 61 6D 65";

    private static void roundTrip(MpaStartupFrame frame, String hex) {
        byte[] expected = Hex.parse(hex);
        ByteBuf out = Unpooled.buffer();
        try {
            frame.encode(out);
            assertArrayEquals(expected, bytes(out), "encode " + frame);
            assertEquals(expected.length, frame.encodedLength());
        } finally {
            out.release();
        }
        assertEquals(frame, decodeAllPrefixes(expected));
    }

    /** Decodes the vector after first offering every strict prefix, which must yield null and consume nothing. */
    static MpaStartupFrame decodeAllPrefixes(byte[] v) {
        for (int i = 0; i < v.length; i++) {
            ByteBuf prefix = Unpooled.wrappedBuffer(v, 0, i);
            assertNull(MpaStartupFrame.decode(prefix, 512), "prefix of " + i);
            assertEquals(0, prefix.readerIndex());
        }
        ByteBuf whole = Unpooled.wrappedBuffer(v);
        MpaStartupFrame f = MpaStartupFrame.decode(whole, 512);
        assertEquals(v.length, whole.readerIndex());
        return f;
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] a = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), a);
        return a;
    }

    @Test
    void siwRpingRequestRev2EnhancedIrdOrd1() {
        // RFC 5044 §7.1.1: siw's Request for rping
        MpaStartupFrame f = MpaStartupFrame.builder(MpaStartupFrame.Type.REQUEST).revision(2)
                .irdOrd(MpaIrdOrd.of(1, 1)).build();
        roundTrip(f, REQ_KEY + " 10 02 00 04  00 01 00 01");
        assertTrue(f.enhanced());
        assertFalse(f.markers());
        assertFalse(f.crc());
        assertEquals(4, f.privateDataLength());
        assertEquals(0, f.ulpPrivateData().length);
    }

    @Test
    void plainRfc5044RequestWithCrc() {
        MpaStartupFrame f = MpaStartupFrame.builder(MpaStartupFrame.Type.REQUEST).crc(true).revision(1).build();
        roundTrip(f, REQ_KEY + " 40 01 00 00");
        assertNull(f.irdOrd());
    }

    @Test
    void rejectReplyWithPrivateData() {
        MpaStartupFrame f = MpaStartupFrame.builder(MpaStartupFrame.Type.REPLY).crc(true).rejected(true)
                .revision(1).ulpPrivateData("no!".getBytes()).build();
        roundTrip(f, REP_KEY + " 60 01 00 03  6E 6F 21");
        assertTrue(f.rejected());
    }

    @Test
    void rev2RequestIrd16Ord16Crc() {
        // mpa-rev2 §7
        roundTrip(MpaStartupFrame.builder(MpaStartupFrame.Type.REQUEST).crc(true).revision(2)
                .irdOrd(MpaIrdOrd.of(16, 16)).build(), REQ_KEY + " 50 02 00 04  00 10 00 10");
    }

    @Test
    void rev2PeerToPeerRequestWithUlpData() {
        // mpa-rev2 §7: A | 4, C | D | 4, then 6 octets of ULP data
        MpaStartupFrame f = MpaStartupFrame.builder(MpaStartupFrame.Type.REQUEST).revision(2)
                .irdOrd(MpaIrdOrd.peerToPeer(4, 4, EnumSet.of(RtrType.WRITE, RtrType.READ)))
                .ulpPrivateData(Hex.parse("01 02 03 04 05 06")).build();
        roundTrip(f, REQ_KEY + " 10 02 00 0A  80 04 C0 04  01 02 03 04 05 06");
        assertTrue(f.irdOrd().peerToPeer());
        assertEquals(EnumSet.of(RtrType.WRITE, RtrType.READ), f.irdOrd().rtrTypes());
        assertArrayEquals(Hex.parse("01 02 03 04 05 06"), f.ulpPrivateData());
    }

    @Test
    void rev2PeerToPeerReplyWriteRtr() {
        MpaStartupFrame f = MpaStartupFrame.builder(MpaStartupFrame.Type.REPLY).revision(2)
                .irdOrd(MpaIrdOrd.peerToPeer(4, 4, Set.of(RtrType.WRITE))).build();
        roundTrip(f, REP_KEY + " 10 02 00 04  80 04 80 04");
        assertEquals(Set.of(RtrType.WRITE), f.irdOrd().rtrTypes());
    }

    @Test
    void siwReplyToRping() {
        roundTrip(MpaStartupFrame.builder(MpaStartupFrame.Type.REPLY).revision(2).irdOrd(MpaIrdOrd.of(1, 1)).build(),
                REP_KEY + " 10 02 00 04  00 01 00 01");
    }

    @Test
    void rev0DraftRequestWithMarkersAndCrc() {
        // draft-ietf-rddp-mpa-01 §6.1.1: Rev 0, M and C set, no private data
        MpaStartupFrame f = MpaStartupFrame.builder(MpaStartupFrame.Type.REQUEST).markers(true).crc(true)
                .revision(0).build();
        roundTrip(f, REQ_KEY + " C0 00 00 00");
    }

    @Test
    void irdOrdWordBitsAndSendRtr() {
        MpaIrdOrd w = MpaIrdOrd.fromWords(0xC000 | 0x3FFF, 0x4000 | 7);
        assertTrue(w.peerToPeer());
        assertEquals(EnumSet.of(RtrType.SEND, RtrType.READ), w.rtrTypes());
        assertEquals(0x3FFF, w.ird());
        assertEquals(7, w.ord());
        assertEquals(0xFFFF, w.irdWord());
        assertEquals(0x4007, w.ordWord());
    }

    @Test
    void reservedBitsOtherThanEnhancedAreCarried() {
        // RFC 5044: Res is sent 0 and not checked; siw's 0x08 GSO bit must be decodable
        MpaStartupFrame f = decodeAllPrefixes(Hex.parse(REQ_KEY + " 08 01 00 00"));
        assertEquals(0x08, f.reserved());
        assertFalse(f.enhanced());
    }

    @Test
    void rev1FrameWithEnhancedBitHasNoWords() {
        MpaStartupFrame f = decodeAllPrefixes(Hex.parse(REQ_KEY + " 10 01 00 02 AB CD"));
        assertNull(f.irdOrd());
        assertArrayEquals(Hex.parse("AB CD"), f.ulpPrivateData());
    }

    @Test
    void wrongKeyIsError4AssoonAsTheHeaderIsIn() {
        byte[] v = Hex.parse("47 45 54 20 2F 20 48 54 54 50 2F 31 2E 31 0D 0A 48 6F 73 74"); // "GET / HTTP/1.1\r\nHost"
        MpaException e = assertThrows(MpaException.class, () -> MpaStartupFrame.decode(Unpooled.wrappedBuffer(v), 512));
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, e.errorCode());
        assertTrue(e.getMessage().contains("GET / HTTP/1.1"), e.getMessage());
    }

    @Test
    void privateDataLengthOver512IsError4BeforeThePrivateDataArrives() {
        MpaException e = assertThrows(MpaException.class,
                () -> MpaStartupFrame.decode(Unpooled.wrappedBuffer(Hex.parse(REQ_KEY + " 00 01 02 01")), 512));
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, e.errorCode());
        assertTrue(e.getMessage().contains("513"));
    }

    @Test
    void privateDataLengthOverAConfiguredLowerLimit() {
        byte[] v = Hex.parse(REQ_KEY + " 00 01 00 11" + " 00".repeat(17));
        assertEquals(17, MpaStartupFrame.decode(Unpooled.wrappedBuffer(v), 17).privateDataLength());
        assertThrows(MpaException.class, () -> MpaStartupFrame.decode(Unpooled.wrappedBuffer(v), 16));
    }

    @Test
    void enhancedRev2WithoutRoomForWordsIsError4() {
        MpaException e = assertThrows(MpaException.class,
                () -> MpaStartupFrame.decode(Unpooled.wrappedBuffer(Hex.parse(REQ_KEY + " 10 02 00 02 00 01")), 512));
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, e.errorCode());
    }

    @Test
    void builderRefusesInconsistentFrames() {
        assertThrows(IllegalStateException.class, () -> MpaStartupFrame.builder(MpaStartupFrame.Type.REQUEST)
                .revision(1).irdOrd(MpaIrdOrd.of(1, 1)).build());
        assertThrows(IllegalArgumentException.class, () -> MpaIrdOrd.of(0x4000, 1));
        assertThrows(IllegalArgumentException.class, () -> MpaStartupFrame.builder(MpaStartupFrame.Type.REQUEST)
                .reserved(0x20));
    }
}
