package dev.iwarp.vitcp;

import dev.iwarp.testkit.ReadLoop;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A data segment's payload read into the destination the VI names ({@link VitcpSegmentDecoder#receiveWith}): asked
 * only once the segment's headers are in and checked and at least {@link VitcpPayloadReader#DIRECT_READ_MIN} payload
 * octets are still due, the payload octets placed there (copied from ordinary buffers, or read straight into it
 * through a {@code DirectReadAllocator}), the trailer CRC over what was read, and the segment passed on marked
 * placed with the same fields and octets as when it comes whole, however the stream is cut.
 */
class VitcpDirectPlacementTest {
    private static final int BIG = VitcpPayloadReader.DIRECT_READ_MIN + 500;
    /** Where each type's payloads go in the test's region: Sends at 0, Read Responses at 20000, Writes at their address. */
    private static final int SEND_AT = 0;
    private static final int RESPONSE_AT = 20000;
    private static final int WRITE_AT = 40000;

    private final Placement placement = new Placement();
    private static final UnpooledByteBufAllocator UNTRACKED = new UnpooledByteBufAllocator(false, true);

    /** The VI as far as the decoder sees it: one direct region, a destination for every payload asked about. */
    private static final class Placement implements ViPayloadPlacement {
        /**
         * Outside the leak detector, whose paranoid level records every access of a tracked buffer and of its views
         * (comparing payloads octet by octet for every cut would take minutes); {@link #release} checks instead that
         * every view of it was released.
         */
        final ByteBuf region = new UnpooledByteBufAllocator(true, true).directBuffer(65536, 65536).writeZero(65536);
        final List<ViSegment> asked = new ArrayList<>();
        boolean refuse;

        @Override
        public ByteBuf payloadDestination(ViSegment header, int payloadLength) {
            asked.add(header);
            return refuse ? null : region.retainedSlice(at(header), payloadLength).clear();
        }

        void reset() {
            asked.clear();
            region.setZero(0, region.capacity());
        }
    }

    /** Where {@code s}'s payload belongs in the region. */
    private static int at(ViSegment s) {
        return switch (s.type()) {
            case SEND -> SEND_AT + s.dataOffset();
            case RDMA_READ_RESPONSE -> RESPONSE_AT + s.dataOffset();
            case RDMA_WRITE -> (int) s.rdmaHeader().rdmaAddress() + s.dataOffset();
            default -> throw new AssertionError(s.type() + " has no payload");
        };
    }

    @AfterEach
    void release() {
        assertEquals(1, placement.region.refCnt(), "every destination released");
        placement.region.release();
    }

    private static ByteBuf payload(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return Unpooled.wrappedBuffer(b);
    }

    /** Send (big), NOP, RDMA Write (big), small Send, Read Response (big, not the message's first segment). */
    private static List<ViSegment> segments() {
        return List.of(
                ViSegment.builder(ViSegmentType.SEND).messageNumber(1).endOfMessage(true).immediateData(7)
                        .immediateDataValid(true).build(payload(BIG, 1)),
                ViSegment.builder(ViSegmentType.NOP).messageNumber(1).messageAck(5).rxDescriptorsPosted(3).build(),
                ViSegment.builder(ViSegmentType.RDMA_WRITE).messageNumber(2).endOfMessage(true)
                        .rdmaHeader(new ViRdmaHeader(WRITE_AT, 0x1234, BIG + 1)).build(payload(BIG + 1, 2)),
                ViSegment.builder(ViSegmentType.SEND).messageNumber(3).endOfMessage(true).build(payload(100, 3)),
                ViSegment.builder(ViSegmentType.RDMA_READ_RESPONSE).messageNumber(9).dataOffset(512)
                        .endOfMessage(true).build(payload(BIG + 2, 4)));
    }

    /** The wire octets of {@link #segments()} as the encoder writes them. */
    private static byte[] wire(VitcpCrcMode mode, boolean crc) {
        VitcpSegmentEncoder encoder = new VitcpSegmentEncoder(mode);
        encoder.crcEnabled(crc);
        EmbeddedChannel tx = new EmbeddedChannel(encoder);
        ByteBuf all = Unpooled.buffer();
        for (ViSegment s : segments()) {
            tx.writeOutbound(s);
            ByteBuf b;
            while ((b = tx.readOutbound()) != null) {
                all.writeBytes(b);
                b.release();
            }
        }
        tx.finishAndReleaseAll();
        byte[] out = new byte[all.readableBytes()];
        all.readBytes(out);
        return out;
    }

    /** The segments as a decoder without a placement emits them (whole, from the buffers received). */
    private static List<ViSegment> reference(VitcpCrcMode mode, boolean crc, byte[] wire) {
        EmbeddedChannel ch = new EmbeddedChannel(decoder(mode, crc));
        ch.writeInbound(Unpooled.wrappedBuffer(wire));
        List<ViSegment> out = new ArrayList<>();
        ViSegment s;
        while ((s = ch.readInbound()) != null) {
            out.add(s);
        }
        assertFalse(ch.finish());
        return out;
    }

    private static VitcpSegmentDecoder decoder(VitcpCrcMode mode, boolean crc) {
        VitcpSegmentDecoder d = new VitcpSegmentDecoder(mode);
        d.crcEnabled(crc);
        return d;
    }

    private EmbeddedChannel receiver(VitcpCrcMode mode, boolean crc) {
        VitcpSegmentDecoder d = decoder(mode, crc);
        EmbeddedChannel ch = new EmbeddedChannel(d);
        d.receiveWith(placement);
        return ch;
    }

    private static List<ViSegment> drain(EmbeddedChannel ch, List<ViSegment> out) {
        Object m;
        while ((m = ch.readInbound()) != null) {
            out.add(assertInstanceOf(ViSegment.class, m));
        }
        return out;
    }

    /** Octets of the headers of the data segment starting at {@code wire[start]} (24, 40 for an RDMA Write). */
    private static int headers(byte[] wire, int start) {
        return (wire[start + 1] & ViSegment.TYPE_MASK) == ViSegmentType.RDMA_WRITE.code()
                ? ViSegment.HEADER_LENGTH + ViRdmaHeader.LENGTH : ViSegment.HEADER_LENGTH;
    }

    /**
     * Checks {@code got} against the reference segments: same fields and octets, placed exactly where
     * {@code placedAt} says, the placed ones' payloads in the region and nothing else there, and the placement asked
     * about exactly the placed ones, with their fields.
     */
    private void check(List<ViSegment> expected, List<ViSegment> got, boolean[] placedAt) {
        assertEquals(expected.size(), got.size(), "segments " + got);
        int placedCount = 0;
        ByteBuf shouldBe = Unpooled.buffer(65536).writeZero(65536);
        try {
            for (int i = 0; i < expected.size(); i++) {
                ViSegment e = expected.get(i);
                ViSegment g = got.get(i);
                assertTrue(e.sameAs(g), "segment " + i + ": expected " + e + ", got " + g);
                assertEquals(placedAt[i], g.placed(), "segment " + i + " placed");
                if (g.placed()) {
                    ViSegment question = placement.asked.get(placedCount++);
                    ViSegment fields = ViSegment.decodedForTest(g.toBuilder().trailer(false), Unpooled.EMPTY_BUFFER,
                            false, false);
                    assertTrue(question.sameAs(fields), "asked about " + question + " for " + g);
                    shouldBe.setBytes(at(g), e.content(), e.content().readerIndex(), e.content().readableBytes());
                }
            }
            assertEquals(placedCount, placement.asked.size(), "asked " + placement.asked);
            assertTrue(io.netty.buffer.ByteBufUtil.equals(shouldBe, placement.region), "region holds what was placed");
        } finally {
            shouldBe.release();
        }
    }

    /**
     * The stream in two parts, cut at every octet: a data segment is placed iff its headers were in and at least the
     * minimum of its payload still due after the first part; the rest comes whole. CRC off, and on in both bit orders.
     */
    @ParameterizedTest(name = "{0}, crc {1}")
    @CsvSource({"ETHERNET_REFLECTED, false", "ETHERNET_REFLECTED, true", "MSB_FIRST, true"})
    void placedOrWholeAsTheCutSaysSplitAtEveryByte(VitcpCrcMode mode, boolean crc) {
        byte[] wire = wire(mode, crc);
        List<ViSegment> expected = reference(mode, crc, wire);
        try {
            int trailer = crc ? ViSegment.TRAILER_LENGTH : 0;
            for (int cut = 1; cut < wire.length; cut++) {
                placement.reset();
                EmbeddedChannel ch = receiver(mode, crc);
                // buffers outside the leak detector, for speed as the region's (the other tests here run under it)
                ch.config().setAllocator(UNTRACKED);
                List<ViSegment> got = new ArrayList<>();
                try {
                    ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, cut));
                    drain(ch, got);
                    ch.writeInbound(Unpooled.wrappedBuffer(wire, cut, wire.length - cut));
                    drain(ch, got);
                    boolean[] placedAt = new boolean[expected.size()];
                    int start = 0;
                    for (int i = 0; i < expected.size(); i++) {
                        ViSegment e = expected.get(i);
                        int payload = e.content().readableBytes();
                        int headersEnd = start + headers(wire, start);
                        placedAt[i] = payload > 0 && cut >= headersEnd
                                && headersEnd + payload - cut >= VitcpPayloadReader.DIRECT_READ_MIN;
                        start = headersEnd + payload + trailer;
                    }
                    check(expected, got, placedAt);
                    assertFalse(ch.finish());
                } catch (AssertionError e) {
                    throw new AssertionError("cut at " + cut + ": " + e.getMessage(), e);
                } finally {
                    got.forEach(ReferenceCountUtil::release);
                }
            }
        } finally {
            expected.forEach(ReferenceCountUtil::release);
        }
    }

    /** Byte by byte: every large payload is placed (its headers arrive alone), the small ones come whole. */
    @Test
    void byteByByte() {
        byte[] wire = wire(VitcpCrcMode.ETHERNET_REFLECTED, true);
        List<ViSegment> expected = reference(VitcpCrcMode.ETHERNET_REFLECTED, true, wire);
        EmbeddedChannel ch = receiver(VitcpCrcMode.ETHERNET_REFLECTED, true);
        List<ViSegment> got = new ArrayList<>();
        try {
            for (int i = 0; i < wire.length; i++) {
                ch.writeInbound(Unpooled.wrappedBuffer(wire, i, 1));
            }
            drain(ch, got);
            check(expected, got, new boolean[] {true, false, true, false, true});
        } finally {
            got.forEach(ReferenceCountUtil::release);
            expected.forEach(ReferenceCountUtil::release);
            ch.finishAndReleaseAll();
        }
    }

    /** A placement that answers null gets every segment whole, and nothing in its memory. */
    @Test
    void refusedDestinationMeansWholeSegments() {
        byte[] wire = wire(VitcpCrcMode.ETHERNET_REFLECTED, true);
        List<ViSegment> expected = reference(VitcpCrcMode.ETHERNET_REFLECTED, true, wire);
        placement.refuse = true;
        EmbeddedChannel ch = receiver(VitcpCrcMode.ETHERNET_REFLECTED, true);
        List<ViSegment> got = new ArrayList<>();
        try {
            for (int at = 0; at < wire.length; at += 64) {
                ch.writeInbound(Unpooled.wrappedBuffer(wire, at, Math.min(64, wire.length - at)));
                drain(ch, got);
            }
            assertEquals(3, placement.asked.size(), "asked about each large payload once");
            placement.asked.clear();
            check(expected, got, new boolean[5]);
        } finally {
            got.forEach(ReferenceCountUtil::release);
            expected.forEach(ReferenceCountUtil::release);
            ch.finishAndReleaseAll();
        }
    }

    /** A payload octet changed on the wire: the segment is still placed, and flagged as a CRC error (§3.6). */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"ETHERNET_REFLECTED", "MSB_FIRST"})
    void badCrcIsFlaggedOnThePlacedSegment(VitcpCrcMode mode) {
        byte[] wire = wire(mode, true);
        wire[ViSegment.HEADER_LENGTH + 4000] ^= 0x10; // in the first Send's payload
        List<ViSegment> expected = reference(mode, true, wire);
        EmbeddedChannel ch = receiver(mode, true);
        List<ViSegment> got = new ArrayList<>();
        try {
            ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, ViSegment.HEADER_LENGTH));
            ch.writeInbound(Unpooled.wrappedBuffer(wire, ViSegment.HEADER_LENGTH, wire.length - ViSegment.HEADER_LENGTH));
            drain(ch, got);
            assertTrue(expected.get(0).crcError());
            check(expected, got, new boolean[] {true, false, false, false, false});
            assertTrue(got.get(0).crcError());
            assertFalse(got.get(2).crcError());
        } finally {
            got.forEach(ReferenceCountUtil::release);
            expected.forEach(ReferenceCountUtil::release);
            ch.finishAndReleaseAll();
        }
    }

    /** The stream ends inside a payload read into place: its destination is released, no segment is passed on. */
    @Test
    void closeInsideAPayloadReleasesItsDestination() {
        byte[] wire = wire(VitcpCrcMode.ETHERNET_REFLECTED, true);
        EmbeddedChannel ch = receiver(VitcpCrcMode.ETHERNET_REFLECTED, true);
        VitcpSegmentDecoder d = ch.pipeline().get(VitcpSegmentDecoder.class);
        ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, 200));
        assertEquals(VitcpSegmentDecoder.State.READ_PAYLOAD, d.state());
        assertTrue(d.holdsIncompleteSegment());
        assertEquals(3, placement.region.refCnt(), "the destination and the segment's view of it hold the region");
        assertFalse(ch.finish());
        assertNull(ch.readInbound());
        assertEquals(1, placement.region.refCnt(), "destination released");
    }

    /**
     * A stream of messages (a run of large RDMA Write segments, then a short Send), all of it in the socket: each
     * large payload after the first message's first is read straight into its destination, and from the second
     * message on one read brings everything between two payloads (trailer, the short segment, the next headers): two
     * socket reads per large segment, where reading the short segment after its headers took three.
     */
    @ParameterizedTest(name = "run {0}")
    @CsvSource({"1", "3"})
    void aStreamOfMessagesTakesTwoSocketReadsPerLargeSegment(int run) {
        int messages = 8;
        int large = 36000 / run;
        VitcpSegmentEncoder encoder = new VitcpSegmentEncoder(VitcpCrcMode.ETHERNET_REFLECTED);
        encoder.crcEnabled(true);
        EmbeddedChannel tx = new EmbeddedChannel(encoder);
        for (int m = 0; m < messages; m++) {
            for (int i = 0; i < run; i++) {
                tx.writeOutbound(ViSegment.builder(ViSegmentType.RDMA_WRITE).messageNumber(2 * m).endOfMessage(i == run - 1)
                        .dataOffset(i * large).rdmaHeader(new ViRdmaHeader(0, 0x1234, run * large))
                        .build(payload(large, m + i)));
            }
            tx.writeOutbound(ViSegment.builder(ViSegmentType.SEND).messageNumber(2 * m + 1).endOfMessage(true)
                    .build(payload(100, m)));
        }
        byte[] wire = dev.iwarp.testkit.ChannelOctets.drainOutbound(tx);
        tx.finishAndReleaseAll();
        VitcpSegmentDecoder d = decoder(VitcpCrcMode.ETHERNET_REFLECTED, true);
        EmbeddedChannel ch = new EmbeddedChannel();
        ReadLoop reads = ReadLoop.on(ch, d);
        d.receiveWith(placement);
        d.readDirectlyWith(reads.allocator());
        List<ViSegment> got = new ArrayList<>();
        try {
            reads.readAll(ch, wire, 0, wire.length);
            drain(ch, got);
            assertEquals(messages * (run + 1), got.size());
            for (int k = 0; k < got.size(); k++) {
                ViSegment g = got.get(k);
                assertEquals(g.type() == ViSegmentType.RDMA_WRITE, g.placed(), "segment " + k + ": " + g);
                assertFalse(g.crcError(), "segment " + k);
            }
            // the first read (the allocator's first guess) takes the first Write's headers and its first octets
            long direct = reads.allocator().octetsReadDirectly();
            assertTrue(direct > (messages * run - 1) * (long) large, "read directly " + direct);
            // the first message: the first read's guess, the rest of its first payload, then as many reads as later
            long later = reads.allocator().socketReads() - 2 - 2L * run;
            assertTrue(later <= 2L * run * (messages - 1), reads.allocator().socketReads() + " socket reads for "
                    + messages + " messages of " + run + " large segments and a short one");
        } finally {
            got.forEach(ReferenceCountUtil::release);
            ch.finishAndReleaseAll();
        }
    }

    /**
     * Over Netty's read loop with a {@code DirectReadAllocator}: the socket reads of each large payload after the
     * first go straight into its destination, all but the octets one read took in together with its headers.
     */
    @Test
    void socketReadsGoStraightIntoTheDestination() {
        byte[] wire = wire(VitcpCrcMode.ETHERNET_REFLECTED, true);
        List<ViSegment> expected = reference(VitcpCrcMode.ETHERNET_REFLECTED, true, wire);
        VitcpSegmentDecoder d = decoder(VitcpCrcMode.ETHERNET_REFLECTED, true);
        EmbeddedChannel ch = new EmbeddedChannel();
        ReadLoop reads = ReadLoop.on(ch, d);
        d.receiveWith(placement);
        d.readDirectlyWith(reads.allocator());
        List<ViSegment> got = new ArrayList<>();
        try {
            reads.readAll(ch, wire, 0, wire.length);
            drain(ch, got);
            assertEquals(expected.size(), got.size());
            // the first read (the allocator's first guess) takes the Send's headers and part of its payload
            assertTrue(got.get(2).placed() && got.get(4).placed(), "Write and Read Response placed: " + got);
            long direct = reads.allocator().octetsReadDirectly();
            long atLeast = (BIG + 1) + (BIG + 2) - (VitcpPayloadReader.LONGEST_DATA_HEADERS - ViSegment.HEADER_LENGTH);
            assertTrue(direct >= atLeast, "read directly " + direct + ", at least " + atLeast);
            boolean[] placedAt = new boolean[expected.size()];
            for (int i = 0; i < got.size(); i++) {
                placedAt[i] = got.get(i).placed();
            }
            check(expected, got, placedAt);
        } finally {
            got.forEach(ReferenceCountUtil::release);
            expected.forEach(ReferenceCountUtil::release);
            ch.finishAndReleaseAll();
        }
    }
}
