package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Data Source segmentation (RFC 5041 §5.2) and transmit MSNs (§5.3). */
class DdpSegmenterTest {
    /** MULPDU of MPA over Ethernet with TCP timestamps (RFC 5044 §4.5: EMSS 1448 less MPA's overhead). */
    static final int MULPDU = 1442;
    static final int STAG = 0x0012ab00;
    static final long TO = 0x000055d5c0a0b2a0L;

    static final int[] SIZES_TAGGED = {0, 1, MULPDU - 14 - 1, MULPDU - 14, MULPDU - 14 + 1, 1 << 20};
    static final int[] SIZES_UNTAGGED = {0, 1, MULPDU - 18 - 1, MULPDU - 18, MULPDU - 18 + 1, 1 << 20};

    static ByteBuf message(int size) {
        byte[] b = new byte[size];
        new Random(size).nextBytes(b);
        ByteBuf m = PooledByteBufAllocator.DEFAULT.buffer(size + 3);
        m.writeBytes(new byte[3]).skipBytes(3); // a non-zero reader index: slices must start there
        return m.writeBytes(b);
    }

    @Test
    void taggedAtEverySizeBoundary() {
        DdpSegmenter segmenter = new DdpSegmenter(() -> MULPDU);
        for (int size : SIZES_TAGGED) {
            ByteBuf m = message(size);
            byte[] expected = ByteBufUtil.getBytes(m);
            List<DdpTaggedSegment> out = new ArrayList<>();
            int n = segmenter.segmentTagged(0x40, STAG, TO, m, out);
            int max = MULPDU - 14;
            assertEquals(Math.max(1, (size + max - 1) / max), n, "segments for " + size);
            assertEquals(n, out.size());
            ByteArrayOutputStream joined = new ByteArrayOutputStream();
            long offset = 0;
            for (int i = 0; i < n; i++) {
                DdpTaggedSegment s = out.get(i);
                boolean last = i == n - 1;
                assertEquals(last, s.isLast(), "L on exactly the last");
                assertEquals(1, s.ddpVersion());
                assertEquals(0x40, s.rsvdUlp());
                assertEquals(STAG, s.stag());
                assertEquals(TO + offset, s.to(), "TO advances by the payload so far");
                assertTrue(s.headerLength() + s.payloadLength() <= MULPDU);
                if (!last) {
                    assertEquals(max, s.payloadLength(), "non-last segments are full");
                } else {
                    assertTrue(size == 0 || s.payloadLength() > 0, "no empty segment except a zero-length message");
                }
                joined.write(ByteBufUtil.getBytes(s.content()), 0, s.payloadLength());
                offset += s.payloadLength();
                s.release();
            }
            assertArrayEquals(expected, joined.toByteArray(), "payloads concatenate to the message");
            assertEquals(3, m.readerIndex(), "message indices untouched");
            assertEquals(1, m.refCnt(), "segments released their own references; the caller keeps one");
            m.release();
        }
    }

    @Test
    void untaggedAtEverySizeBoundary() {
        DdpSegmenter segmenter = new DdpSegmenter(() -> MULPDU);
        int expectedMsn = 1;
        for (int size : SIZES_UNTAGGED) {
            ByteBuf m = message(size);
            byte[] expected = ByteBufUtil.getBytes(m);
            List<DdpUntaggedSegment> out = new ArrayList<>();
            int msn = segmenter.segmentUntagged(0x44, 0x0034cd00, 0, m, out);
            assertEquals(expectedMsn++, msn, "QN 0 MSNs 1, 2, 3, ...");
            int max = MULPDU - 18;
            int n = out.size();
            assertEquals(Math.max(1, (size + max - 1) / max), n, "segments for " + size);
            ByteArrayOutputStream joined = new ByteArrayOutputStream();
            int mo = 0;
            for (int i = 0; i < n; i++) {
                DdpUntaggedSegment s = out.get(i);
                boolean last = i == n - 1;
                assertEquals(last, s.isLast());
                assertEquals(1, s.ddpVersion());
                assertEquals(0x44, s.rsvdUlp());
                assertEquals(0x0034cd00, s.rsvdUlp2());
                assertEquals(0, s.qn());
                assertEquals(msn, s.msn());
                assertEquals(mo, s.mo(), "MO = octets before this segment");
                assertTrue(s.headerLength() + s.payloadLength() <= MULPDU);
                if (!last) {
                    assertEquals(max, s.payloadLength());
                }
                joined.write(ByteBufUtil.getBytes(s.content()), 0, s.payloadLength());
                mo += s.payloadLength();
                s.release();
            }
            assertArrayEquals(expected, joined.toByteArray());
            assertEquals(1, m.refCnt());
            m.release();
        }
    }

    @Test
    void knownAnswersOnTheWire() {
        DdpSegmenter segmenter = new DdpSegmenter(() -> MULPDU);
        List<DdpSegment> out = new ArrayList<>();
        segmenter.segmentTagged(0x40, 1, 0L, Unpooled.EMPTY_BUFFER, out);
        ByteBuf advert = Unpooled.wrappedBuffer(DdpCodecTest.RPING_SEND, 18, 16);
        assertEquals(1, segmenter.segmentUntagged(0x43, 0, 0, advert, out));
        assertEquals(2, out.size());
        assertArrayEquals(DdpCodecTest.WRITE_RTR, DdpCodecTest.encode(out.get(0)), "zero-length Write RTR");
        assertArrayEquals(DdpCodecTest.RPING_SEND, DdpCodecTest.encode(out.get(1)), "rping's first Send");
    }

    @Test
    void msnCountersArePerQueue() {
        DdpSegmenter segmenter = new DdpSegmenter(() -> 128);
        List<DdpUntaggedSegment> out = new ArrayList<>();
        ByteBuf empty = Unpooled.EMPTY_BUFFER;
        assertEquals(1, segmenter.segmentUntagged(0x43, 0, 0, empty, out));
        assertEquals(2, segmenter.segmentUntagged(0x43, 0, 0, empty, out));
        assertEquals(1, segmenter.segmentUntagged(0x41, 0, 1, empty, out), "QN 1 has its own counter");
        assertEquals(1, segmenter.segmentUntagged(0x47, 0, 2, empty, out), "Terminate: MSN 1 on QN 2");
        assertEquals(3, segmenter.segmentUntagged(0x43, 0, 0, empty, out));
        assertEquals(1, segmenter.segmentUntagged(0x43, 0, 100, empty, out), "counters grow on demand");
        assertEquals(4, segmenter.counter(0).peek());
        assertThrows(IllegalArgumentException.class, () -> segmenter.segmentUntagged(0x43, 0, -1, empty, out));
        out.forEach(DdpSegment::release);
    }

    @Test
    void msnWrapsAfterFfffffff() {
        UntaggedMsnCounter c = new UntaggedMsnCounter(0xFFFFFFFE);
        assertEquals(0xFFFFFFFE, c.next());
        assertEquals(0xFFFFFFFF, c.next());
        assertEquals(0, c.peek());
        assertEquals(0, c.next(), "after 0xFFFFFFFF comes 0 (modulo 2^32)");
        assertEquals(1, c.next());
        assertEquals(1, new UntaggedMsnCounter().next(), "first message is MSN 1");
    }

    @Test
    void mulpduIsAskedPerMessage() {
        AtomicInteger mulpdu = new AtomicInteger(128);
        DdpSegmenter segmenter = new DdpSegmenter(mulpdu::get);
        ByteBuf m = Unpooled.wrappedBuffer(new byte[300]);
        List<DdpSegment> out = new ArrayList<>();
        assertEquals(3, segmenter.segmentTagged(0x40, STAG, 0, m, out)); // 114 + 114 + 72
        mulpdu.set(314);
        assertEquals(1, segmenter.segmentTagged(0x40, STAG, 0, m, out));
        mulpdu.set(14);
        assertThrows(IllegalStateException.class, () -> segmenter.segmentTagged(0x40, STAG, 0, m, out),
                "no room for payload");
        mulpdu.set(18);
        assertThrows(IllegalStateException.class, () -> segmenter.segmentUntagged(0x43, 0, 0, 1, m, out));
        assertEquals(4, out.size());
        out.forEach(DdpSegment::release);
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 100})
    void toAtTheTopOfTheSpace(int size) {
        DdpSegmenter segmenter = new DdpSegmenter(() -> 64);
        ByteBuf m = Unpooled.wrappedBuffer(new byte[size]);
        List<DdpTaggedSegment> out = new ArrayList<>();
        segmenter.segmentTagged(0x40, STAG, -size, m, out); // last octet at 2^64-1
        DdpTaggedSegment last = out.get(out.size() - 1);
        assertEquals(-1L, last.to() + last.payloadLength() - 1);
        out.forEach(DdpSegment::release);
        assertThrows(IllegalArgumentException.class, () -> segmenter.segmentTagged(0x40, STAG, -size + 1, m, out),
                "TO would wrap");
    }

    /** copyEachSegment: each segment carries its own copy of its octets, from any source buffer kind. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"pooled-slice", "heap", "adaptive"})
    void copiedSegmentsCarryTheMessageOctets(String source) {
        byte[] octets = new byte[3 * MULPDU + 7];
        new java.util.Random(3).nextBytes(octets);
        io.netty.buffer.ByteBuf region = switch (source) {
            case "heap" -> io.netty.buffer.Unpooled.buffer(octets.length + 10);
            case "adaptive" -> new io.netty.buffer.AdaptiveByteBufAllocator().directBuffer(octets.length + 10);
            default -> io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer(octets.length + 10);
        };
        region.writeZero(10).writeBytes(octets);
        io.netty.buffer.ByteBuf payload = region.retainedSlice(10, octets.length);
        region.release();
        DdpOutboundMessage m = new DdpSegmenter(() -> MULPDU).tagged(0x40, STAG, TO, payload)
                .copyEachSegment(new io.netty.buffer.AdaptiveByteBufAllocator());
        java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
        while (m.hasNextSegment()) {
            DdpSegment s = m.nextSegment();
            try {
                got.writeBytes(io.netty.buffer.ByteBufUtil.getBytes(s.content()));
            } finally {
                s.release();
            }
        }
        org.junit.jupiter.api.Assertions.assertArrayEquals(octets, got.toByteArray());
        org.junit.jupiter.api.Assertions.assertEquals(0, payload.refCnt(), "the message released its payload");
    }

    /**
     * sourceReleased: the source is free only once every segment was produced and each carried a copy,
     * made here (copyEachSegment) or reported by the lower layer (payloadCopiedBelow); a zero-copy segment,
     * one not reported, or a discarded message keeps it false. A recycled message starts over.
     */
    @Test
    void theSourceIsReleasedOnlyWhenEverySegmentWasCopied() {
        DdpSegmenter segmenter = new DdpSegmenter(() -> MULPDU);
        DdpOutboundMessage zeroCopy = segmenter.tagged(0x40, STAG, TO, message(100));
        zeroCopy.nextSegment().release();
        assertFalse(zeroCopy.sourceReleased(), "its one segment is a slice of the source");
        zeroCopy.recycle();

        DdpOutboundMessage copied = segmenter.tagged(0x40, STAG, TO, message(3 * MULPDU))
                .copyEachSegment(PooledByteBufAllocator.DEFAULT);
        assertSame(zeroCopy, copied, "the recycled object");
        for (int i = 0; copied.hasNextSegment(); i++) {
            assertFalse(copied.sourceReleased(), "segment " + i + " not produced yet");
            copied.nextSegment().release();
        }
        assertTrue(copied.sourceReleased(), "every segment a copy");
        copied.recycle();

        DdpOutboundMessage below = segmenter.untagged(0x41, 0, 0, message(2 * MULPDU));
        assertFalse(below.sourceReleased(), "a recycled message starts over");
        below.nextSegment().release(); // zero-copy: the lower layer reported nothing
        while (below.hasNextSegment()) {
            below.nextSegment().release();
            below.payloadCopiedBelow();
        }
        assertFalse(below.sourceReleased(), "one segment went down uncopied");
        below.recycle();

        DdpOutboundMessage reported = segmenter.untagged(0x41, 0, 0, message(2 * MULPDU));
        while (reported.hasNextSegment()) {
            reported.nextSegment().release();
            reported.payloadCopiedBelow();
        }
        assertTrue(reported.sourceReleased(), "the lower layer copied each segment");
        reported.recycle();

        DdpOutboundMessage discarded = segmenter.tagged(0x40, STAG, TO, message(3 * MULPDU))
                .copyEachSegment(PooledByteBufAllocator.DEFAULT);
        discarded.nextSegment().release();
        discarded.discard();
        assertFalse(discarded.sourceReleased(), "discarded with segments never sent");
        discarded.recycle();
    }

    /** A message given back once done becomes the next message, with none of the old one's state. */
    @Test
    void aRecycledMessageIsMadeNewForTheNextMessage() {
        DdpSegmenter segmenter = new DdpSegmenter(() -> MULPDU);
        DdpOutboundMessage first = segmenter.tagged(0x40, STAG, TO, message(3 * MULPDU))
                .copyEachSegment(PooledByteBufAllocator.DEFAULT);
        first.nextSegment().release();
        assertThrows(IllegalStateException.class, first::recycle, "segments remain");
        first.discard();
        first.recycle();
        assertThrows(IllegalStateException.class, first::recycle, "given back twice");
        assertThrows(IllegalStateException.class, first::nextSegment, "a recycled message has no segment");

        ByteBuf payload = message(5);
        byte[] expected = ByteBufUtil.getBytes(payload);
        DdpOutboundMessage next = segmenter.untagged(0x41, 7, 1, payload);
        org.junit.jupiter.api.Assertions.assertSame(first, next, "the object is reused");
        assertTrue(next.hasNextSegment());
        assertEquals(5, next.remaining());
        DdpUntaggedSegment s = (DdpUntaggedSegment) next.nextSegment();
        try {
            assertTrue(s.isLast());
            assertEquals(0x41, s.rsvdUlp());
            assertEquals(7, s.rsvdUlp2());
            assertEquals(1, s.qn());
            assertEquals(1, s.msn());
            assertEquals(0, s.mo(), "the offset starts again");
            assertArrayEquals(expected, ByteBufUtil.getBytes(s.payload()));
            org.junit.jupiter.api.Assertions.assertSame(payload, s.payload(),
                    "handed on, not copied: the old message's copyEachSegment is gone");
        } finally {
            s.release();
        }
        next.recycle();
    }

    /**
     * A segment cut without an object ({@link DdpOutboundMessage#nextSegment(ByteBuf)}) has exactly the
     * header octets and payload of the segment object cut from the same message, tagged and untagged, with and
     * without a copy per segment; {@link DdpOutboundMessage#nextSegmentIsLast()} says beforehand which one is last.
     * The header goes to a heap buffer (also one whose array starts at an offset) or a direct one.
     */
    @ParameterizedTest(name = "copy each segment: {0}, header buffer: {1}")
    @CsvSource({"false, heap", "true, heap", "false, heap at offset 7", "false, direct", "true, direct"})
    void aSegmentWithoutItsObjectHasTheObjectsOctets(boolean copy, String headerKind) {
        DdpSegmenter objects = new DdpSegmenter(() -> MULPDU);
        DdpSegmenter headers = new DdpSegmenter(() -> MULPDU);
        ByteBuf header = switch (headerKind) {
            case "heap" -> Unpooled.buffer(DdpUntaggedSegment.HEADER_LENGTH);
            case "direct" -> Unpooled.directBuffer(DdpUntaggedSegment.HEADER_LENGTH);
            default -> Unpooled.wrappedBuffer(new byte[40], 7, DdpUntaggedSegment.HEADER_LENGTH);
        };
        assertEquals(headerKind.startsWith("heap"), header.hasArray());
        for (boolean tagged : new boolean[] {true, false}) {
            for (int size : tagged ? SIZES_TAGGED : SIZES_UNTAGGED) {
                ByteBuf a = message(size);
                ByteBuf b = message(size);
                DdpOutboundMessage ma = tagged ? objects.tagged(0x41, STAG, TO, a) : objects.untagged(0x43, STAG, 0, a);
                DdpOutboundMessage mb = tagged ? headers.tagged(0x41, STAG, TO, b) : headers.untagged(0x43, STAG, 0, b);
                if (copy) {
                    ma.copyEachSegment(PooledByteBufAllocator.DEFAULT);
                    mb.copyEachSegment(PooledByteBufAllocator.DEFAULT);
                }
                int segments = 0;
                while (ma.hasNextSegment()) {
                    boolean last = mb.nextSegmentIsLast();
                    DdpSegment s = ma.nextSegment();
                    header.clear();
                    ByteBuf payload = mb.nextSegment(header);
                    segments++;
                    try {
                        ByteBuf expected = Unpooled.buffer(DdpUntaggedSegment.HEADER_LENGTH);
                        s.encodeHeader(expected);
                        assertArrayEquals(ByteBufUtil.getBytes(expected), ByteBufUtil.getBytes(header),
                                (tagged ? "tagged " : "untagged ") + size + " segment " + segments);
                        assertEquals(s.isLast(), last, "nextSegmentIsLast before segment " + segments);
                        assertArrayEquals(ByteBufUtil.getBytes(s.content()), ByteBufUtil.getBytes(payload));
                        assertEquals(segments, mb.segmentsProduced());
                    } finally {
                        s.release();
                        payload.release();
                    }
                }
                assertTrue(!mb.hasNextSegment(), "both messages end together");
                assertEquals(0, a.refCnt(), "every reference to the message's payload went with its segments");
                assertEquals(0, b.refCnt());
                assertThrows(IllegalStateException.class, () -> mb.nextSegment(header));
            }
        }
        header.release();
    }
}
