package dev.iwarp.ddp;

import dev.iwarp.testkit.Hex;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Known answers for the DDP header codec (RFC 5041 §4): siw_qp_tx.c and the MPA draft's Fig. 5. */
class DdpCodecTest {

    /** siw_qp_tx.c: rping client's first Send (ULPDU 34): untagged, L, QN 0, MSN 1, MO 0, 16-octet advert. */
    static final byte[] RPING_SEND = Hex.parse("41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00"
            + "00 00 55 d5 c0 a0 b2 a0 00 12 ab 00 00 00 00 40");
    /** siw_qp_tx.c: server's Read Request (ULPDU 46): QN 1, MSN 1, MO 0, 28-octet RDMAP header. */
    static final byte[] READ_REQUEST = Hex.parse("41 41 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00 00"
            + "00 34 cd 00 00 00 7f 00 11 22 33 40 00 00 00 40 00 12 ab 00 00 00 55 d5 c0 a0 b2 a0");
    /** siw_qp_tx.c: zero-length RDMA Write RTR (ULPDU 14): tagged, L, STag 1, TO 0. */
    static final byte[] WRITE_RTR = Hex.parse("c1 40 00 00 00 01 00 00 00 00 00 00 00 00");
    /** MPA draft Fig. 5 (RFC 5044 Appendix, draft-ietf-rddp-mpa Fig. 5): DV=0 RDMAC untagged Send, QN 0, MSN 1, MO 0, 24 zero octets. */
    static final byte[] DRAFT_FIG5 = Hex.parse("40 03 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00"
            + "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");

    static DdpSegment decode(byte[] ulpdu) {
        EmbeddedChannel ch = new EmbeddedChannel(new DdpCodec());
        ByteBuf in = ch.alloc().buffer(ulpdu.length).writeBytes(ulpdu); // leak-tracked: the codec must release it
        assertTrue(ch.writeInbound(in));
        DdpSegment s = ch.readInbound();
        assertNull(ch.readInbound());
        assertFalse(ch.finish());
        assertEquals(0, in.refCnt() - 1, "the segment holds the only reference left");
        return s;
    }

    static byte[] encode(DdpSegment segment) {
        EmbeddedChannel ch = new EmbeddedChannel(new DdpCodec());
        assertTrue(ch.writeOutbound(segment));
        ByteBuf out = ch.readOutbound();
        assertNull(ch.readOutbound());
        try {
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
            assertFalse(ch.finish());
        }
    }

    static byte[] payload(DdpSegment s) {
        return ByteBufUtil.getBytes(s.content());
    }

    @Test
    void rpingSend() {
        DdpUntaggedSegment s = assertInstanceOf(DdpUntaggedSegment.class, decode(RPING_SEND));
        try {
            assertFalse(s.isTagged());
            assertTrue(s.isLast());
            assertEquals(1, s.ddpVersion());
            assertEquals(0x43, s.rsvdUlp());
            assertEquals(0, s.rsvdUlp2());
            assertEquals(0, s.qn());
            assertEquals(1, s.msn());
            assertEquals(0, s.mo());
            assertEquals(18, s.headerLength());
            assertArrayEquals(Hex.parse("00 00 55 d5 c0 a0 b2 a0 00 12 ab 00 00 00 00 40"), payload(s));
            assertEquals(0x41, s.controlOctet());
        } finally {
            s.release();
        }
        ByteBuf advert = Unpooled.wrappedBuffer(RPING_SEND, 18, 16);
        assertArrayEquals(RPING_SEND, encode(new DdpUntaggedSegment(true, 0x43, 0, 0, 1, 0, advert)));
    }

    @Test
    void readRequest() {
        DdpUntaggedSegment s = assertInstanceOf(DdpUntaggedSegment.class, decode(READ_REQUEST));
        try {
            assertTrue(s.isLast());
            assertEquals(1, s.ddpVersion());
            assertEquals(0x41, s.rsvdUlp());
            assertEquals(1, s.qn());
            assertEquals(1, s.msn());
            assertEquals(0, s.mo());
            assertEquals(28, s.payloadLength(), "the RDMAP Read Request header is DDP payload");
            assertEquals(0x0034cd00, s.content().getInt(s.content().readerIndex()), "Data Sink STag");
            assertEquals(0x00007f0011223340L, s.content().getLong(s.content().readerIndex() + 4), "Data Sink TO");
        } finally {
            s.release();
        }
        ByteBuf rdmapHeader = Unpooled.wrappedBuffer(READ_REQUEST, 18, 28);
        assertArrayEquals(READ_REQUEST, encode(new DdpUntaggedSegment(true, 0x41, 0, 1, 1, 0, rdmapHeader)));
    }

    @Test
    void zeroLengthWriteRtr() {
        DdpTaggedSegment s = assertInstanceOf(DdpTaggedSegment.class, decode(WRITE_RTR));
        try {
            assertTrue(s.isTagged());
            assertTrue(s.isLast());
            assertEquals(1, s.ddpVersion());
            assertEquals(0x40, s.rsvdUlp());
            assertEquals(1, s.stag());
            assertEquals(0L, s.to());
            assertEquals(0, s.payloadLength());
            assertEquals(14, s.headerLength());
        } finally {
            s.release();
        }
        assertArrayEquals(WRITE_RTR, encode(new DdpTaggedSegment(true, 0x40, 1, 0L, Unpooled.EMPTY_BUFFER)));
    }

    @Test
    void readResponseIsAComposite() {
        byte[] data = new byte[64];
        java.util.Arrays.fill(data, (byte) 0x41);
        ByteBuf payload = PooledByteBufAllocator.DEFAULT.buffer(64).writeBytes(data);
        byte[] wire = encode(new DdpTaggedSegment(true, 0x42, 0x0034cd00, 0x00007f0011223340L, payload));
        assertEquals(0, payload.refCnt(), "the encoder released the segment, the composite its reference");
        byte[] expected = new byte[78];
        System.arraycopy(Hex.parse("c1 42 00 34 cd 00 00 00 7f 00 11 22 33 40"), 0, expected, 0, 14);
        System.arraycopy(data, 0, expected, 14, 64);
        assertArrayEquals(expected, wire, "siw-interop.md §9 Read Response ULPDU");
    }

    @Test
    void draftFigure5VersionZero() {
        DdpUntaggedSegment s = assertInstanceOf(DdpUntaggedSegment.class, decode(DRAFT_FIG5));
        try {
            assertTrue(s.isLast());
            assertEquals(0, s.ddpVersion(), "RDMAC DV 0: the codec reports it, the engine rejects it");
            assertEquals(0x03, s.rsvdUlp());
            assertEquals(0, s.qn());
            assertEquals(1, s.msn());
            assertEquals(0, s.mo());
            assertArrayEquals(new byte[24], payload(s));
        } finally {
            s.release();
        }
        assertArrayEquals(DRAFT_FIG5, encode(new DdpUntaggedSegment(true, 0, 0x03, 0, 0, 1, 0,
                Unpooled.wrappedBuffer(new byte[24]))));
    }

    @Test
    void reservedBitsAreIgnoredOnReceiptAndSentAsZero() {
        byte[] ulpdu = WRITE_RTR.clone();
        ulpdu[0] = (byte) (0xC1 | DdpSegment.RSVD_MASK);
        DdpTaggedSegment s = assertInstanceOf(DdpTaggedSegment.class, decode(ulpdu));
        assertTrue(s.isLast());
        assertEquals(1, s.ddpVersion());
        assertArrayEquals(WRITE_RTR, encode(s));
    }

    @Test
    void roundTripsKeepEveryFieldIncludingUnsignedExtremes() {
        Random r = new Random(5041);
        int[] ints = {0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF};
        long[] longs = {0L, 1L, Long.MAX_VALUE, Long.MIN_VALUE, -1L};
        for (int i = 0; i < 200; i++) {
            byte[] p = new byte[r.nextInt(40)];
            r.nextBytes(p);
            boolean last = r.nextBoolean();
            int dv = r.nextInt(4);
            int ulp = r.nextInt(256);
            if (r.nextBoolean()) {
                int stag = i < 5 ? ints[i] : r.nextInt();
                long to = i < 5 ? longs[i] : r.nextLong();
                DdpTaggedSegment s = assertInstanceOf(DdpTaggedSegment.class,
                        decode(encode(new DdpTaggedSegment(last, dv, ulp, stag, to, Unpooled.wrappedBuffer(p)))));
                assertEquals(last, s.isLast());
                assertEquals(dv, s.ddpVersion());
                assertEquals(ulp, s.rsvdUlp());
                assertEquals(stag, s.stag());
                assertEquals(to, s.to());
                assertArrayEquals(p, payload(s));
                s.release();
            } else {
                int a = i < 5 ? ints[i] : r.nextInt();
                int qn = r.nextInt();
                int msn = i < 5 ? ints[4 - i] : r.nextInt();
                int mo = r.nextInt();
                DdpUntaggedSegment s = assertInstanceOf(DdpUntaggedSegment.class, decode(encode(
                        new DdpUntaggedSegment(last, dv, ulp, a, qn, msn, mo, Unpooled.wrappedBuffer(p)))));
                assertEquals(last, s.isLast());
                assertEquals(dv, s.ddpVersion());
                assertEquals(ulp, s.rsvdUlp());
                assertEquals(a, s.rsvdUlp2());
                assertEquals(qn, s.qn());
                assertEquals(msn, s.msn());
                assertEquals(mo, s.mo());
                assertArrayEquals(p, payload(s));
                s.release();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "c1", "c1 40 00 00 00 01 00 00 00 00 00 00 00", "41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00"})
    void ulpduShorterThanItsHeaderIsRejectedAndReleased(String hex) {
        byte[] ulpdu = Hex.parse(hex);
        EmbeddedChannel ch = new EmbeddedChannel(new DdpCodec());
        ByteBuf in = ch.alloc().buffer(Math.max(1, ulpdu.length)).writeBytes(ulpdu);
        DdpException e = assertThrows(DdpException.class, () -> ch.writeInbound(in));
        assertEquals(DdpError.LOCAL_CATASTROPHIC, e.error());
        assertNull(e.ddpHeader(), "no header to quote");
        assertEquals(-1, e.segmentLength());
        assertEquals(0, in.refCnt());
        assertNull(ch.readInbound());
        assertFalse(ch.finish());
        // the static entry point says the same, leaving the caller's reference alone
        ByteBuf again = Unpooled.wrappedBuffer(ulpdu);
        assertEquals(DdpError.LOCAL_CATASTROPHIC, assertThrows(DdpException.class, () -> DdpCodec.decode(again)).error());
        assertEquals(1, again.refCnt());
    }

    @Test
    void exactlyAHeaderIsAZeroLengthSegment() {
        DdpUntaggedSegment s = assertInstanceOf(DdpUntaggedSegment.class, decode(java.util.Arrays.copyOf(RPING_SEND, 18)));
        assertEquals(0, s.payloadLength());
        s.release();
    }

    @Test
    void exceptionForSegmentQuotesTheHeaderAndPayloadLength() {
        DdpUntaggedSegment s = new DdpUntaggedSegment(true, 0x43, 0, 0, 1, 0, Unpooled.wrappedBuffer(RPING_SEND, 18, 16));
        DdpException e = DdpException.forSegment(DdpError.INVALID_MSN_NO_BUFFER, s, "no receive posted");
        assertEquals(DdpError.INVALID_MSN_NO_BUFFER, e.error());
        assertArrayEquals(java.util.Arrays.copyOf(RPING_SEND, 18), e.ddpHeader());
        assertEquals(16, e.segmentLength());
        assertTrue(e.getMessage().contains("0x02"), e.getMessage());
        assertEquals(1, s.refCnt(), "the caller keeps the segment");
        DdpTaggedSegment t = new DdpTaggedSegment(true, 0x40, 1, 0, Unpooled.EMPTY_BUFFER);
        DdpException te = DdpException.forSegment(DdpError.BASE_OR_BOUNDS_VIOLATION, t, "out of bounds");
        assertArrayEquals(WRITE_RTR, te.ddpHeader());
        assertEquals(0, te.segmentLength());
        assertTrue(te.error().carriesDdpHeader());
        assertFalse(DdpError.INVALID_DDP_VERSION_TAGGED.carriesDdpHeader());
    }

    /** In the pipeline the payload is the ULPDU itself read past the header: no slice per segment. */
    @Test
    void decodedPayloadIsTheUlpduPastItsHeader() {
        EmbeddedChannel ch = new EmbeddedChannel(new DdpCodec());
        ByteBuf in = ch.alloc().buffer(RPING_SEND.length).writeBytes(RPING_SEND);
        assertTrue(ch.writeInbound(in));
        DdpSegment s = ch.readInbound();
        try {
            assertTrue(s.content() == in, "payload " + s.content() + " is not the ULPDU " + in);
            assertEquals(DdpUntaggedSegment.HEADER_LENGTH, s.content().readerIndex());
            assertArrayEquals(java.util.Arrays.copyOfRange(RPING_SEND, 18, RPING_SEND.length),
                    ByteBufUtil.getBytes(s.content()));
            assertEquals(1, in.refCnt(), "the segment holds the only reference left");
        } finally {
            s.release();
        }
        assertFalse(ch.finish());
    }

}
