package dev.iwarp.rdmap;

import dev.iwarp.ddp.DdpError;
import dev.iwarp.ddp.DdpException;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.testkit.Hex;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.CorruptedFrameException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TerminateMessageTest {
    static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    static final String SEND_HEADER = "41 43 00000000 00000000 00000005 00000000"; // Send, QN 0, MSN 5
    static final String READ_REQUEST_HEADER = "41 41 00000000 00000001 00000001 00000000";
    static final String READ_REQUEST_BODY = "0034cd00 00007f0011223340 00000040 0012ab00 000055d5c0a0b2a0";

    static DdpSegment send16() {
        return RdmapSegments.send(5, 0, true, Unpooled.wrappedBuffer(new byte[16]));
    }

    static DdpSegment write64() {
        return RdmapSegments.rdmaWrite(true, 0x55bd1200, 0x00005578c3989550L, Unpooled.wrappedBuffer(new byte[64]));
    }

    static DdpSegment readRequest() {
        return RdmapSegments.readRequest(1, SiwKnownAnswers.READ_REQUEST, ALLOC);
    }

    private static byte[] payload(TerminateMessage t) {
        return Arrays.copyOfRange(UlpduOctets.ulpdu(t.toSegment(ALLOC)), 18, 18 + t.encodedLength());
    }

    private static TerminateMessage terminate(TerminateCause cause, DdpSegment offending, ReadRequestHeader rr) {
        try {
            return TerminateMessage.forError(cause, offending, rr);
        } finally {
            if (offending != null) {
                offending.release();
            }
        }
    }

    /** RFC 5040 §4.7: the four ULPDU sizes, from the "which headers to include" table. */
    @Test
    void ulpduSizesFollowTheTable() {
        // LLP error: nothing
        assertUlpdu(22, terminate(TerminateCause.ofMpa(2), null, null));
        // DDP and RDMAP version errors, RDMAP OpCode errors: nothing, even when the segment is known
        assertUlpdu(22, terminate(TerminateCause.of(DdpError.INVALID_DDP_VERSION_UNTAGGED), send16(), null));
        assertUlpdu(22, terminate(TerminateCause.of(DdpError.INVALID_DDP_VERSION_TAGGED), write64(), null));
        assertUlpdu(22, terminate(RdmapError.INVALID_RDMAP_VERSION.cause(), send16(), null));
        assertUlpdu(22, terminate(RdmapError.UNEXPECTED_OPCODE.cause(), readRequest(), SiwKnownAnswers.READ_REQUEST));
        // local catastrophic errors: nothing
        assertUlpdu(22, terminate(RdmapError.LOCAL_CATASTROPHIC.cause(), send16(), null));
        assertUlpdu(22, terminate(TerminateCause.of(DdpError.LOCAL_CATASTROPHIC), send16(), null));
        // other DDP errors: length + header of the offending segment's model
        assertUlpdu(38, terminate(TerminateCause.of(DdpError.INVALID_STAG), write64(), null));
        assertUlpdu(42, terminate(TerminateCause.of(DdpError.INVALID_MSN_RANGE), send16(), null));
        // RDMAP remote operation error on a Read Request (siw: beyond IRD): no Read Request header
        assertUlpdu(42, terminate(RdmapError.CATASTROPHIC_STREAM.cause(), readRequest(), SiwKnownAnswers.READ_REQUEST));
        // RDMAP remote protection error on a Read Request: both headers
        assertUlpdu(70, terminate(RdmapError.INVALID_STAG.cause(), readRequest(), SiwKnownAnswers.READ_REQUEST));
        // ... the Read Request header found in the offending segment when not given
        TerminateMessage derived = terminate(RdmapError.BASE_OR_BOUNDS_VIOLATION.cause(), readRequest(), null);
        assertEquals(SiwKnownAnswers.READ_REQUEST, derived.terminatedRdmaHeader());
        assertUlpdu(70, derived);
        // ... and on a Send with Invalidate: no Read Request to report
        assertUlpdu(42, terminate(RdmapError.REMOTE_PROTECTION_STAG_CANNOT_BE_INVALIDATED.cause(), send16(), null));
    }

    private static void assertUlpdu(int length, TerminateMessage t) {
        byte[] ulpdu = UlpduOctets.ulpdu(t.toSegment(ALLOC));
        assertEquals(length, ulpdu.length, t::describe);
        assertEquals(0, (2 + ulpdu.length) % 4, "ULPDU_Length + ULPDU needs no pad (RFC 5044 §4.2)");
    }

    @Test
    void readRequestProtectionErrorOctets() {
        TerminateMessage t = terminate(RdmapError.INVALID_STAG.cause(), readRequest(), SiwKnownAnswers.READ_REQUEST);
        assertArrayEquals(Hex.parse("01 00 e0 00  002e" + READ_REQUEST_HEADER + READ_REQUEST_BODY), payload(t));
        assertTrue(t.m() && t.d() && t.r());
        assertEquals(46, t.ddpSegmentLength(), "the whole offending DDP segment");
        assertEquals(SiwKnownAnswers.READ_REQUEST, t.terminatedRdmaHeader());
        assertArrayEquals(Hex.parse(READ_REQUEST_HEADER), t.terminatedDdpHeader());
    }

    @Test
    void wholeTerminateSegment() {
        DdpSegment s = terminate(TerminateCause.of(DdpError.INVALID_STAG), write64(), null).toSegment(ALLOC);
        assertArrayEquals(Hex.parse("41 47 00000000 00000002 00000001 00000000"   // QN 2, MSN 1, MO 0
                        + "11 00 c0 00  004e  c1 40 55bd1200 00005578c3989550"),    // 1/1/0x00, M D, 78, header
                UlpduOctets.ulpdu(s));
    }

    /** siw's iwarp.h bitfields: what we send (RFC order) and what siw sends for the same three errors. */
    @Test
    void siwVersusRfcRows() {
        // LLP / MPA / CRC error, no flags
        TerminateMessage crc = TerminateMessage.forError(TerminateCause.ofMpa(2), null, null);
        assertArrayEquals(Hex.parse("20 02 00 00"), payload(crc));
        assertSiwRow("02 02 00 00", crc);

        // DDP / untagged / MSN range, M+D (siw's length: the payload, 16)
        TerminateMessage msn = TerminateMessage.forError(TerminateCause.of(DdpError.INVALID_MSN_RANGE),
                Hex.parse(SEND_HEADER), 16, null);
        assertArrayEquals(Hex.parse("12 03 c0 00 0010" + SEND_HEADER), payload(msn));
        assertSiwRow("21 03 03 00 0010" + SEND_HEADER, msn);

        // RDMAP / remote protection / invalid STag, M+D+R (siw's length: 0 for a Read Request)
        TerminateMessage stag = TerminateMessage.forError(RdmapError.INVALID_STAG.cause(),
                Hex.parse(READ_REQUEST_HEADER), 0, SiwKnownAnswers.READ_REQUEST);
        assertArrayEquals(Hex.parse("01 00 e0 00 0000" + READ_REQUEST_HEADER + READ_REQUEST_BODY), payload(stag));
        assertSiwRow("10 00 07 00 0000" + READ_REQUEST_HEADER + READ_REQUEST_BODY, stag);
    }

    private static void assertSiwRow(String siwHex, TerminateMessage rfc) {
        // our RFC-order octets decode to the same message, with no siw suspicion
        TerminateMessage back = TerminateMessage.decode(Unpooled.wrappedBuffer(payload(rfc)));
        assertEquals(rfc, back);
        assertFalse(back.siwByteOrderSuspected(), back::describe);
        assertSame(back, back.interpreted());
        // siw's octets: suspected, and the siw reading is the same message
        TerminateMessage siw = TerminateMessage.decode(Unpooled.wrappedBuffer(Hex.parse(siwHex)));
        assertTrue(siw.siwByteOrderSuspected(), siw::describe);
        assertEquals(Integer.parseUnsignedInt(siwHex.replace(" ", "").substring(0, 8), 16), siw.rawControl());
        assertEquals(rfc, siw.asSiwOrder());
        assertEquals(rfc, siw.interpreted());
    }

    /**
     * Terminates Linux siw 6.1 sent to {@code iwarp-server probe} in the interop matrix
     * ({@code interop/siw-matrix.sh}, stock profile): siw's bit order, the payload length as "DDP
     * Segment Length", and in the Read case the Read size (16) where the MSN (1) belongs.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "write-invalid-stag, '11 00 03 00 0010 c140 00dead00 0000000000000000', 1, 1, 0, true, true, false, 16",
            "send-too-long, '21 02 03 00 0040 4143 00000000 00000000 00000001 00000000', 1, 2, 2, true, true, false, 64",
            "read-invalid-stag, '10 00 07 00 0000 4141 00000000 00000001 00000010 00000000"
                    + " 00b0d3de 0000d9a396600000 00000010 00dead00 0000000000000000', 0, 1, 0, true, true, true, 0"})
    void terminatesSiwSentInTheInteropMatrix(String probeCase, String hex, int layer, int etype, int code, boolean m,
                                             boolean d, boolean r, int segmentLength) {
        TerminateMessage raw = TerminateMessage.decode(Unpooled.wrappedBuffer(Hex.parse(hex)));
        assertTrue(raw.siwByteOrderSuspected(), raw::describe);
        TerminateMessage t = raw.interpreted();
        assertEquals(new TerminateCause(layer, etype, code), t.cause(), t::describe);
        assertEquals(m, t.m());
        assertEquals(d, t.d());
        assertEquals(r, t.r());
        assertEquals(segmentLength, t.ddpSegmentLength());
        assertArrayEquals(Arrays.copyOfRange(Hex.parse(hex), 6, 6 + t.terminatedDdpHeader().length),
                t.terminatedDdpHeader());
        if (r) {
            ReadRequestHeader h = t.terminatedRdmaHeader();
            assertEquals(0x00dead00, h.sourceStag());
            assertEquals(16, h.size());
            // siw's quirk: the echoed DDP header's MSN field holds the Read size, not MSN 1
            assertArrayEquals(Hex.parse("00000010"), Arrays.copyOfRange(t.terminatedDdpHeader(), 10, 14));
        }
    }

    @Test
    void siwSetsRWithoutAnRdmaHeaderAfterSendWithInvalidate() {
        // RFC 5040 §4.7: 0/1/0x09 with M D R but no Read Request header behind the DDP header
        TerminateMessage t = TerminateMessage.decode(Unpooled.wrappedBuffer(
                Hex.parse("01 09 e0 00 0000 41 44 8f0fad00 00000000 00000001 00000000")));
        assertSame(RdmapError.REMOTE_PROTECTION_STAG_CANNOT_BE_INVALIDATED, t.cause().rdmapError());
        assertTrue(t.r());
        assertNull(t.terminatedRdmaHeader());
        assertArrayEquals(Hex.parse("41 44 8f0fad00 00000000 00000001 00000000"), t.terminatedDdpHeader());
        assertTrue(t.describe().endsWith("(RDMA header missing)"), t.describe());
    }

    @Test
    void taggedHeaderSizeComesFromItsTBit() {
        TerminateMessage t = TerminateMessage.decode(Unpooled.wrappedBuffer(
                Hex.parse("11 01 c0 00 004e c1 40 55bd1200 00005578c3989550")));
        assertEquals(14, t.terminatedDdpHeader().length);
        assertEquals(78, t.ddpSegmentLength());
        assertSame(DdpError.BASE_OR_BOUNDS_VIOLATION, t.cause().ddpError());
        // D set but the header cut short: absent, not an exception
        TerminateMessage cut = TerminateMessage.decode(Unpooled.wrappedBuffer(Hex.parse("11 01 c0 00 004e c1 40 55")));
        assertTrue(cut.d());
        assertNull(cut.terminatedDdpHeader());
    }

    @Test
    void fewerThanFourOctetsIsCorrupt() {
        ByteBuf b = Unpooled.wrappedBuffer(Hex.parse("20 02 00"));
        assertThrows(CorruptedFrameException.class, () -> TerminateMessage.decode(b));
    }

    @Test
    void fromDdpException() {
        DdpException e = new DdpException(DdpError.INVALID_MSN_NO_BUFFER, "no receive posted",
                Hex.parse(SEND_HEADER), 16);
        TerminateMessage t = TerminateMessage.forDdpException(e);
        assertArrayEquals(Hex.parse("12 02 c0 00 0022" + SEND_HEADER), payload(t), "length 18 + 16");
        TerminateMessage version = TerminateMessage.forDdpException(new DdpException(
                DdpError.INVALID_DDP_VERSION_UNTAGGED, "DV 0", Hex.parse(SEND_HEADER), 16));
        assertArrayEquals(Hex.parse("12 06 00 00"), payload(version));
    }

    @Test
    void headerMustMatchItsTBit() {
        TerminateCause c = TerminateCause.of(DdpError.INVALID_STAG);
        assertThrows(IllegalArgumentException.class,
                () -> TerminateMessage.forError(c, Arrays.copyOf(Hex.parse("c1 40"), 18), 0, null));
        assertThrows(IllegalArgumentException.class,
                () -> TerminateMessage.forError(c, Arrays.copyOf(Hex.parse("41 43"), 14), 0, null));
    }

    @ParameterizedTest(name = "{0}/{1}/{2}")
    @CsvSource({
            // layer, etype, code, registered, carries DDP header, may carry RDMA header
            "0, 0, 0xFF, true,  false, false",
            "0, 0, 0x00, true,  false, false",  // EType 0: any code
            "0, 1, 0x00, true,  true,  true",
            "0, 1, 0x04, true,  true,  true",
            "0, 1, 0x05, false, false, false",
            "0, 2, 0x05, true,  false, false",
            "0, 2, 0x06, true,  false, false",
            "0, 2, 0x07, true,  true,  false",
            "0, 2, 0x09, true,  true,  false",
            "1, 1, 0x04, true,  false, false",
            "1, 2, 0x06, true,  false, false",
            "1, 2, 0x05, true,  true,  false",
            "1, 1, 0x05, false, false, false",
            "2, 0, 0x02, true,  false, false",
            "2, 0, 0x07, true,  false, false",
            "2, 0, 0x08, false, false, false",
            "3, 0, 0x00, false, false, false",
    })
    void causeRegistry(int layer, int etype, String code, boolean registered, boolean ddpHeader, boolean rdmaHeader) {
        TerminateCause c = new TerminateCause(layer, etype, Integer.decode(code));
        assertEquals(registered, c.registered(), c::describe);
        assertEquals(ddpHeader, c.carriesDdpHeader(), c::describe);
        assertEquals(rdmaHeader, c.mayCarryRdmaHeader(), c::describe);
    }

    @Test
    void causeDescriptions() {
        assertEquals("RDMAP 0/1/0x00 remote protection error: invalid STag", RdmapError.INVALID_STAG.describe());
        assertEquals("RDMAP 0/0/0xff local catastrophic error: local catastrophic error",
                RdmapError.LOCAL_CATASTROPHIC.describe());
        assertEquals("DDP 1/2/0x03 untagged buffer error: invalid MSN - MSN range is not valid",
                TerminateCause.of(DdpError.INVALID_MSN_RANGE).describe());
        assertEquals("LLP 2/0/0x06 MPA error: insufficient IRD resources", TerminateCause.ofMpa(6).describe());
        assertEquals("reserved layer 5/3/0x07 reserved error type: (unregistered)",
                new TerminateCause(5, 3, 7).describe());
        assertThrows(IllegalArgumentException.class, () -> new TerminateCause(16, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> TerminateCause.ofMpa(256));
    }

    @Test
    void rdmapErrorTable() {
        // RFC 6580 registries, Layer 0
        int[][] expected = {
                {0x0, 0xFF}, {0x1, 0x00}, {0x1, 0x01}, {0x1, 0x02}, {0x1, 0x03}, {0x1, 0x04}, {0x1, 0x09}, {0x1, 0xFF},
                {0x2, 0x05}, {0x2, 0x06}, {0x2, 0x07}, {0x2, 0x08}, {0x2, 0x09}, {0x2, 0xFF}};
        RdmapError[] all = RdmapError.values();
        assertEquals(expected.length, all.length);
        for (int i = 0; i < all.length; i++) {
            assertEquals(expected[i][0], all[i].errorType(), all[i].name());
            assertEquals(expected[i][1], all[i].errorCode(), all[i].name());
            assertSame(all[i], RdmapError.find(expected[i][0], expected[i][1]));
        }
        assertSame(RdmapError.LOCAL_CATASTROPHIC, RdmapError.find(0, 0x42));
        assertNull(RdmapError.find(1, 0x05));
        assertNull(RdmapError.find(3, 0x00));
    }
}
