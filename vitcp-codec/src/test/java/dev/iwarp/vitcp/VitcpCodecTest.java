package dev.iwarp.vitcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static dev.iwarp.vitcp.Splits.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Known-answer vectors for every segment type, built field by field from draft-dicecco-vitcp-01 §3.2-§3.5.
 * Segment Length counts the headers and payload but not the trailer (§3.2). Trailer CRCs were computed with an
 * independent bitwise implementation (interpretation A octets little-endian, B big-endian; draft-dicecco-vitcp-01 §3.6).
 */
class VitcpCodecTest {

    private static final VitcpCrcMode A = VitcpCrcMode.ETHERNET_REFLECTED;
    private static final VitcpCrcMode B = VitcpCrcMode.MSB_FIRST;

    private static String zeros(int n) {
        return "00".repeat(n);
    }

    private static String pad64(String hex) {
        return hex + zeros(64 - hex.length() / 2);
    }

    // Version | Type/Flags | Segment Length | Data Offset | Immediate Data | Message Number | Message ACK |
    // Rx Descriptors Posted | Remote Error Code  (§3.2)

    /** Send, EOM|IDV (0xC0), 29 = 24 + 5 payload, offset 0x500, imm 0xCAFEBABE, msg 0x124, ack 0x123, rx 7. */
    static final String SEND = "01" + "C0" + "001D" + "00000500" + "CAFEBABE" + "00000124" + "00000123" + "0007"
            + "0000" + "68656c6c6f";
    static final String SEND_CRC_A = "34087c99";
    static final String SEND_CRC_B = "cbd40fbe";

    /** RdmaWrite EOM|IDV (0xC1), 43 = 24 + 16 + 3; RDMA Header address 0x0000100020003000, handle, length 3. */
    static final String WRITE = "01" + "C1" + "002B" + "00000000" + "01020304" + "00000123" + "00000000" + "0010"
            + "0000" + "0000100020003000" + "11223344" + "00000003" + "a1b2c3";
    static final String WRITE_CRC_A = "63bc514f";

    /** RdmaReadRequest EOM (0x82), 40 = 24 + 16; reads 16 MiB at 0xFFFFFFFF00000040 handle 0xABCD. */
    static final String READ_REQUEST = "01" + "82" + "0028" + "00000000" + "00000000" + "00000125" + "00000122"
            + "0001" + "0000" + "FFFFFFFF00000040" + "0000ABCD" + "01000000";
    static final String READ_REQUEST_CRC_A = "984a02d5";

    /** RdmaReadResponse not EOM (0x03), 28, offset 0x333, the request's number 0x777660 (§2.2.2.2.3 example). */
    static final String READ_RESPONSE = "01" + "03" + "001C" + "00000333" + "00000000" + "00777660" + "00000124"
            + "0002" + "0000" + "deadbeef";
    static final String READ_RESPONSE_CRC_A = "0e773f18";

    /** NOP (0x04), 24, ack 0x7F, Rx Descriptors Posted 0xFFFF, Remote Error Code IS=1, UTE|MPE = 0x0105. */
    static final String NOP = "01" + "04" + "0018" + "00000000" + "00000000" + "00000126" + "0000007F" + "FFFF"
            + "0105";
    static final String NOP_CRC_A = "8e04015c";
    static final String NOP_CRC_B = "558e2e56";

    /** Send with EOM|Transmit Error (0xA0), 26, two zero pad octets (§2.2.2.2.5). */
    static final String SEND_TRANSMIT_ERROR = "01" + "A0" + "001A" + "00000000" + "00000000" + "00000001"
            + "00000000" + "0000" + "0000" + "0000";
    static final String SEND_TRANSMIT_ERROR_CRC_A = "308c8fdf";

    // CE Header (§3.3): Calling Attributes | Calling Discriminator Length | MTU Size | Calling Discriminator (64) |
    // Calling RDMA Read Window | Called Discriminator Length | Called Discriminator (64) | Options

    /**
     * ConnectRequest EOM (0x85), 170 = 24 + 140 + CRC option (4) + End of Option List (2). Attributes 0x003C =
     * Reliable Reception | RDMA Write | RDMA Read | Descriptor Flow Control; MTU 8192; read window 4;
     * calling "clien", called "server". Carries the CRC option, so a trailer follows (§3.5).
     */
    static final String CONNECT_REQUEST = "01" + "85" + "00AA" + zeros(16) + "0000" + "0000"
            + "003C" + "0005" + "00002000" + pad64("636c69656e") + "0004" + "0006" + pad64("736572766572")
            + "0001" + "0004" + "0000";
    static final String CONNECT_REQUEST_CRC_A = "8a0a6115";
    static final String CONNECT_REQUEST_CRC_B = "d8bd6cd8";

    /** ConnectAccept (0x86), 164 = 24 + 140, no options: Reliable Reception | RDMA Write, MTU 4096, window 2. */
    static final String CONNECT_ACCEPT = "01" + "86" + "00A4" + zeros(16) + "0000" + "0000"
            + "000C" + "0006" + "00001000" + pad64("736572766572") + "0002" + "0005" + pad64("636c69656e");

    /** ConnectRequest with an unknown option (type 9, length 8, data a1..a4) and Urgent Marker, no EOL: 176. */
    static final String CONNECT_REQUEST_UNKNOWN_OPTION = "01" + "85" + "00B0" + zeros(16) + "0000" + "0000"
            + "0001" + "0000" + "FFFFFFFF" + zeros(64) + "0000" + "0000" + zeros(64)
            + "0009" + "0008" + "a1a2a3a4" + "0002" + "0004";

    /** ConnectReject (0x87) without trailer: Segment Length 24. */
    static final String CONNECT_REJECT = "01" + "87" + "0018" + zeros(20);
    /** ConnectReject with trailer: Segment Length 28 counts it (see ViSegment#segmentLength). */
    static final String CONNECT_REJECT_WITH_CRC = "01" + "87" + "001C" + zeros(20);
    static final String CONNECT_REJECT_CRC_A = "3298f6ee";
    static final String CONNECT_REJECT_CRC_B = "f919f89d";
    /** ConnectNoMatch (0x88), 24. */
    static final String CONNECT_NO_MATCH = "01" + "88" + "0018" + zeros(20);

    private static ByteBuf ascii(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.US_ASCII);
    }

    static ViSegment sendSegment() {
        return ViSegment.builder(ViSegmentType.SEND).endOfMessage(true).immediateDataValid(true).dataOffset(0x500)
                .immediateData(0xCAFEBABE).messageNumber(0x124).messageAck(0x123).rxDescriptorsPosted(7)
                .build(ascii("hello"));
    }

    static ViSegment writeSegment() {
        return ViSegment.builder(ViSegmentType.RDMA_WRITE).endOfMessage(true).immediateDataValid(true)
                .immediateData(0x01020304).messageNumber(0x123).rxDescriptorsPosted(0x10)
                .rdmaHeader(new ViRdmaHeader(0x0000100020003000L, 0x11223344, 3))
                .build(Unpooled.wrappedBuffer(hex("a1b2c3")));
    }

    static ViSegment readRequestSegment() {
        return ViSegment.builder(ViSegmentType.RDMA_READ_REQUEST).endOfMessage(true).messageNumber(0x125)
                .messageAck(0x122).rxDescriptorsPosted(1)
                .rdmaHeader(new ViRdmaHeader(0xFFFFFFFF00000040L, 0xABCD, 16 << 20)).build();
    }

    static ViSegment readResponseSegment() {
        return ViSegment.builder(ViSegmentType.RDMA_READ_RESPONSE).dataOffset(0x333).messageNumber(0x777660)
                .messageAck(0x124).rxDescriptorsPosted(2).build(Unpooled.wrappedBuffer(hex("deadbeef")));
    }

    static ViSegment nopSegment() {
        return ViSegment.builder(ViSegmentType.NOP).messageNumber(0x126).messageAck(0x7F).rxDescriptorsPosted(0xFFFF)
                .remoteErrorCode(ViRemoteErrorCode.of(ViRemoteErrorCode.UTE | ViRemoteErrorCode.MPE, 1)).build();
    }

    static ViSegment transmitErrorSegment() {
        return ViSegment.builder(ViSegmentType.SEND).endOfMessage(true).transmitError(true).messageNumber(1)
                .build(Unpooled.wrappedBuffer(new byte[2]));
    }

    static ViCeHeader requestCe() {
        return new ViCeHeader(0x3C, 8192, "clien".getBytes(StandardCharsets.US_ASCII), 4,
                "server".getBytes(StandardCharsets.US_ASCII), List.of(ViCeOption.CRC_OPTION), true);
    }

    static ViSegment connectRequestSegment() {
        return ViSegment.builder(ViSegmentType.CONNECT_REQUEST).endOfMessage(true).ceHeader(requestCe()).build();
    }

    static ViSegment connectAcceptSegment() {
        return ViSegment.builder(ViSegmentType.CONNECT_ACCEPT).endOfMessage(true).ceHeader(
                new ViCeHeader(0x0C, 4096, "server".getBytes(StandardCharsets.US_ASCII), 2,
                        "clien".getBytes(StandardCharsets.US_ASCII), List.of(), false)).build();
    }

    // ---------------------------------------------------------------- decode, every split

    private static void assertDecodes(VitcpCrcMode mode, boolean crcEnabled, String wire, ViSegment expected) {
        byte[] bytes = hex(wire);
        try {
            Splits.forEachSplit(() -> {
                VitcpSegmentDecoder d = new VitcpSegmentDecoder(mode);
                d.crcEnabled(crcEnabled);
                return d;
            }, bytes, out -> {
                assertEquals(1, out.size(), "decoded " + out);
                ViSegment s = assertInstanceOf(ViSegment.class, out.get(0));
                assertTrue(expected.sameAs(s), "expected " + expected + " got " + s);
                assertFalse(s.crcError());
            });
        } finally {
            expected.release();
        }
    }

    private static ViSegment withTrailer(ViSegment s) {
        ViSegment t = ViSegment.decodedForTest(s.toBuilder(), s.content().retain(), true, false);
        s.release();
        return t;
    }

    @Test
    void sendWithoutCrc() {
        assertDecodes(A, false, SEND, sendSegment());
    }

    @Test
    void sendWithCrcBothModes() {
        assertDecodes(A, true, SEND + SEND_CRC_A, withTrailer(sendSegment()));
        assertDecodes(B, true, SEND + SEND_CRC_B, withTrailer(sendSegment()));
    }

    @Test
    void rdmaWrite() {
        assertDecodes(A, false, WRITE, writeSegment());
        assertDecodes(A, true, WRITE + WRITE_CRC_A, withTrailer(writeSegment()));
    }

    @Test
    void rdmaReadRequest() {
        assertDecodes(A, false, READ_REQUEST, readRequestSegment());
        assertDecodes(A, true, READ_REQUEST + READ_REQUEST_CRC_A, withTrailer(readRequestSegment()));
    }

    @Test
    void rdmaReadResponse() {
        assertDecodes(A, false, READ_RESPONSE, readResponseSegment());
        assertDecodes(A, true, READ_RESPONSE + READ_RESPONSE_CRC_A, withTrailer(readResponseSegment()));
    }

    @Test
    void nopWithRemoteErrorCode() {
        assertDecodes(A, false, NOP, nopSegment());
        assertDecodes(A, true, NOP + NOP_CRC_A, withTrailer(nopSegment()));
        assertDecodes(B, true, NOP + NOP_CRC_B, withTrailer(nopSegment()));
        ViSegment s = nopSegment();
        assertEquals(ViRemoteErrorCode.UTE | ViRemoteErrorCode.MPE, ViRemoteErrorCode.viErrorType(s.remoteErrorCode()));
        assertEquals(1, ViRemoteErrorCode.isErrorCode(s.remoteErrorCode()));
        s.release();
    }

    @Test
    void transmitErrorFlag() {
        assertDecodes(A, false, SEND_TRANSMIT_ERROR, transmitErrorSegment());
        assertDecodes(A, true, SEND_TRANSMIT_ERROR + SEND_TRANSMIT_ERROR_CRC_A, withTrailer(transmitErrorSegment()));
    }

    @Test
    void connectRequestWithCrcOptionCarriesTrailerRegardlessOfConnectionState() {
        assertDecodes(A, false, CONNECT_REQUEST + CONNECT_REQUEST_CRC_A, withTrailer(connectRequestSegment()));
        assertDecodes(B, false, CONNECT_REQUEST + CONNECT_REQUEST_CRC_B, withTrailer(connectRequestSegment()));
    }

    @Test
    void connectAcceptWithoutOptionsHasNoTrailer() {
        assertDecodes(A, true, CONNECT_ACCEPT, connectAcceptSegment());
    }

    @Test
    void unknownOptionIsSkippedAndUrgentMarkerSeen() {
        ViCeHeader ce = new ViCeHeader(ViCallingAttributes.UNRELIABLE, 0xFFFFFFFFL, new byte[0], 0, new byte[0],
                List.of(new ViCeOption(9, 8), ViCeOption.URGENT_MARKER_OPTION), false);
        assertDecodes(A, false, CONNECT_REQUEST_UNKNOWN_OPTION,
                ViSegment.builder(ViSegmentType.CONNECT_REQUEST).endOfMessage(true).ceHeader(ce).build());
        assertFalse(ce.crcOption());
        assertTrue(ce.hasOption(ViCeOption.URGENT_MARKER));
        assertEquals(ViReliabilityLevel.UNRELIABLE, ce.reliabilityLevel());
    }

    @Test
    void rejectAndNoMatchTrailerDetectedByLength() {
        assertDecodes(A, true, CONNECT_REJECT,
                ViSegment.builder(ViSegmentType.CONNECT_REJECT).endOfMessage(true).build());
        assertDecodes(A, false, CONNECT_REJECT_WITH_CRC + CONNECT_REJECT_CRC_A,
                ViSegment.builder(ViSegmentType.CONNECT_REJECT).endOfMessage(true).trailer(true).build());
        assertDecodes(B, false, CONNECT_REJECT_WITH_CRC + CONNECT_REJECT_CRC_B,
                ViSegment.builder(ViSegmentType.CONNECT_REJECT).endOfMessage(true).trailer(true).build());
        assertDecodes(A, true, CONNECT_NO_MATCH, ViSegment.builder(ViSegmentType.CONNECT_NO_MATCH).endOfMessage(true).build());
    }

    @Test
    void readResponsesInterleavedInOneStream() {
        // draft-dicecco-vitcp-01 §2.2.2.2.3: a Read Response between two segments of a Send, all split every way
        String send1 = "01" + "00" + "001A" + "00000000" + "00000000" + "00000124" + "00000000" + "0000" + "0000"
                + "6869";
        String send2 = "01" + "80" + "0019" + "00000002" + "00000000" + "00000124" + "00000000" + "0000" + "0000"
                + "21";
        byte[] bytes = hex(send1 + READ_RESPONSE + send2);
        Splits.forEachSplit(() -> new VitcpSegmentDecoder(A), bytes, out -> {
            assertEquals(3, out.size());
            ViSegment s1 = (ViSegment) out.get(0);
            ViSegment r = (ViSegment) out.get(1);
            ViSegment s2 = (ViSegment) out.get(2);
            assertEquals(ViSegmentType.SEND, s1.type());
            assertFalse(s1.endOfMessage());
            assertEquals("hi", s1.content().toString(StandardCharsets.US_ASCII));
            assertEquals(ViSegmentType.RDMA_READ_RESPONSE, r.type());
            assertEquals(0x777660, r.messageNumber());
            assertTrue(s2.endOfMessage());
            assertEquals(2, s2.dataOffset());
            assertEquals("!", s2.content().toString(StandardCharsets.US_ASCII));
        });
    }

    // ---------------------------------------------------------------- CRC error is reported, not thrown

    @Test
    void corruptPayloadIsFlaggedAsCrcError() {
        byte[] bytes = hex(SEND + SEND_CRC_A);
        bytes[25] ^= 0x01;
        Splits.forEachSplit(() -> {
            VitcpSegmentDecoder d = new VitcpSegmentDecoder(A);
            d.crcEnabled(true);
            return d;
        }, bytes, out -> {
            assertEquals(1, out.size());
            ViSegment s = (ViSegment) out.get(0);
            assertTrue(s.crcError());
            assertEquals(5, s.content().readableBytes());
        });
    }

    @Test
    void crcOfTheOtherInterpretationIsAnError() {
        byte[] bytes = hex(SEND + SEND_CRC_B);
        Splits.forEachSplit(() -> {
            VitcpSegmentDecoder d = new VitcpSegmentDecoder(A);
            d.crcEnabled(true);
            return d;
        }, bytes, out -> assertTrue(((ViSegment) out.get(0)).crcError()));
    }

    // ---------------------------------------------------------------- malformed input

    private static void assertViolation(String wire, VitcpProtocolException.Violation violation, int decodedBefore) {
        // trailing garbage after the bad segment must be discarded, not decoded
        byte[] bytes = hex(wire + NOP);
        Splits.forEachSplit(() -> new VitcpSegmentDecoder(A), bytes, out -> {
            assertEquals(decodedBefore + 1, out.size(), "out " + out);
            VitcpProtocolException e = assertInstanceOf(VitcpProtocolException.class, out.get(out.size() - 1));
            assertEquals(violation, e.violation());
        });
    }

    @Test
    void unsupportedVersion() {
        assertViolation("02" + NOP.substring(2), VitcpProtocolException.Violation.UNSUPPORTED_VERSION, 0);
    }

    @Test
    void unknownType() {
        assertViolation("01" + "89" + NOP.substring(4), VitcpProtocolException.Violation.UNKNOWN_TYPE, 0);
    }

    @Test
    void segmentLengthShorterThanHeaders() {
        assertViolation("01" + "00" + "0017" + NOP.substring(8), VitcpProtocolException.Violation.BAD_SEGMENT_LENGTH, 0);
        // an RDMA Write needs 40 octets of headers
        assertViolation(WRITE.substring(0, 4) + "0027" + WRITE.substring(8),
                VitcpProtocolException.Violation.BAD_SEGMENT_LENGTH, 0);
        // a NOP has no payload
        assertViolation(NOP.substring(0, 4) + "0019" + NOP.substring(8) + "00",
                VitcpProtocolException.Violation.BAD_SEGMENT_LENGTH, 0);
        // a Reject is 24 or 28
        assertViolation("01" + "87" + "001A" + zeros(22), VitcpProtocolException.Violation.BAD_SEGMENT_LENGTH, 0);
    }

    @Test
    void dataOffsetOnSingleSegmentType() {
        assertViolation(NOP.substring(0, 8) + "00000010" + NOP.substring(16),
                VitcpProtocolException.Violation.BAD_DATA_OFFSET, 0);
    }

    @Test
    void discriminatorLongerThan64() {
        String bad = CONNECT_ACCEPT.substring(0, 2 * 24 + 4) + "0041" + CONNECT_ACCEPT.substring(2 * 24 + 8);
        assertViolation(bad, VitcpProtocolException.Violation.BAD_CE_HEADER, 0);
    }

    @Test
    void optionWithBadLength() {
        String bad = "01" + "85" + "00AC" + CONNECT_REQUEST.substring(8, 2 * 164) + "0001" + "0002" + "0000";
        assertViolation(bad, VitcpProtocolException.Violation.BAD_OPTION, 0);
        String overrun = "01" + "85" + "00AC" + CONNECT_REQUEST.substring(8, 2 * 164) + "0009" + "0010" + "0000";
        assertViolation(overrun, VitcpProtocolException.Violation.BAD_OPTION, 0);
    }

    @Test
    void goodSegmentBeforeBadOneIsStillDelivered() {
        assertViolation(SEND + "02" + NOP.substring(2), VitcpProtocolException.Violation.UNSUPPORTED_VERSION, 1);
    }

    // ---------------------------------------------------------------- encode

    private static void assertEncodes(VitcpCrcMode mode, boolean crcEnabled, ViSegment s, String wire) {
        EmbeddedChannel ch = new EmbeddedChannel(new VitcpSegmentEncoder(mode));
        ((VitcpSegmentEncoder) ch.pipeline().first()).crcEnabled(crcEnabled);
        assertTrue(ch.writeOutbound(s));
        ByteBuf out = ch.readOutbound();
        assertEquals(wire.toLowerCase(), ByteBufUtil.hexDump(out));
        out.release();
        assertFalse(ch.finish());
    }

    @Test
    void encodesEveryVector() {
        assertEncodes(A, false, sendSegment(), SEND);
        assertEncodes(A, true, sendSegment(), SEND + SEND_CRC_A);
        assertEncodes(B, true, sendSegment(), SEND + SEND_CRC_B);
        assertEncodes(A, false, writeSegment(), WRITE);
        assertEncodes(A, true, writeSegment(), WRITE + WRITE_CRC_A);
        assertEncodes(A, false, readRequestSegment(), READ_REQUEST);
        assertEncodes(A, true, readRequestSegment(), READ_REQUEST + READ_REQUEST_CRC_A);
        assertEncodes(A, false, readResponseSegment(), READ_RESPONSE);
        assertEncodes(A, true, readResponseSegment(), READ_RESPONSE + READ_RESPONSE_CRC_A);
        assertEncodes(A, false, nopSegment(), NOP);
        assertEncodes(B, true, nopSegment(), NOP + NOP_CRC_B);
        assertEncodes(A, true, transmitErrorSegment(), SEND_TRANSMIT_ERROR + SEND_TRANSMIT_ERROR_CRC_A);
        // CE trailer follows the CRC option, not the connection state
        assertEncodes(A, false, connectRequestSegment(), CONNECT_REQUEST + CONNECT_REQUEST_CRC_A);
        assertEncodes(B, false, connectRequestSegment(), CONNECT_REQUEST + CONNECT_REQUEST_CRC_B);
        assertEncodes(A, true, connectAcceptSegment(), CONNECT_ACCEPT);
        assertEncodes(A, true, ViSegment.builder(ViSegmentType.CONNECT_REJECT).endOfMessage(true).build(), CONNECT_REJECT);
        assertEncodes(A, false, ViSegment.builder(ViSegmentType.CONNECT_REJECT).endOfMessage(true).trailer(true).build(),
                CONNECT_REJECT_WITH_CRC + CONNECT_REJECT_CRC_A);
        assertEncodes(A, true, ViSegment.builder(ViSegmentType.CONNECT_NO_MATCH).endOfMessage(true).build(), CONNECT_NO_MATCH);
    }

    @Test
    void segmentLengthExcludesTrailer() {
        ViSegment s = sendSegment();
        assertEquals(29, s.segmentLength());
        s.release();
        ViSegment ce = connectRequestSegment();
        assertEquals(170, ce.segmentLength());
        ce.release();
    }

    @Test
    void roundTripLargePayloadThroughCodec() {
        byte[] data = new byte[65535 - 40];
        new java.util.Random(1).nextBytes(data);
        for (VitcpCrcMode mode : VitcpCrcMode.values()) {
            EmbeddedChannel enc = new EmbeddedChannel(new VitcpCodec(mode));
            ((VitcpCodec) enc.pipeline().first()).crcEnabled(true);
            enc.writeOutbound(ViSegment.builder(ViSegmentType.RDMA_WRITE).endOfMessage(true)
                    .rdmaHeader(new ViRdmaHeader(0, 1, data.length)).build(Unpooled.wrappedBuffer(data)));
            ByteBuf wire = enc.readOutbound();
            assertEquals(65535 + 4, wire.readableBytes());
            EmbeddedChannel dec = new EmbeddedChannel(new VitcpCodec(mode));
            ((VitcpCodec) dec.pipeline().first()).crcEnabled(true);
            dec.writeInbound(wire);
            ViSegment s = dec.readInbound();
            assertFalse(s.crcError());
            assertArrayEquals(data, ByteBufUtil.getBytes(s.content()));
            s.release();
            assertFalse(enc.finish());
            assertFalse(dec.finish());
        }
    }
}
