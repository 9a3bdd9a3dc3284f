package dev.iwarp.sctp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.sctp.SctpMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Arrays;

import static dev.iwarp.sctp.SctpIndication.DDP;
import static dev.iwarp.sctp.SctpIndication.DDP_WITH_TAG;
import static dev.iwarp.sctp.SctpIndication.RDMA_AND_NEGOTIATION;
import static dev.iwarp.sctp.SctpIndication.RDMA_NEGOTIATION;
import static dev.iwarp.sctp.SctpIndication.RDMA_ONLY;
import static dev.iwarp.sctp.SctpVectors.bytes;
import static dev.iwarp.sctp.SctpVectors.message;
import static dev.iwarp.sctp.SctpVectors.readable;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SctpPlacementCodec}: the known answers S1-S6 decoded and encoded as {@link SctpMessage}s,
 * every cell of the sender-indication x mode matrix (R1-R4 aborts, R5/R6 delivery, unknown modes),
 * short and oversize messages, and the sender rules S1/S2.
 */
class SctpPlacementCodecTest {

    @Test
    void indicationParametersKnownAnswers() {
        for (SctpIndication i : SctpIndication.values()) {
            ByteBuf b = Unpooled.buffer();
            i.writeParameter(b);
            assertArrayEquals(bytes(SctpVectors.PARAMETERS[i.value() - 1]), readable(b), i.toString());
            assertTrue(SctpIndication.isParameter(b));
            assertEquals(i, SctpIndication.of(b.getUnsignedInt(4)));
            b.release();
        }
        assertNull(SctpIndication.of(0));
        assertNull(SctpIndication.of(6));
        assertNull(SctpIndication.of(0xFFFFFFFFL));
        assertEquals(16, DDP.extensionLength());
        assertEquals(16, DDP_WITH_TAG.extensionLength());
        assertEquals(20, RDMA_ONLY.extensionLength());
        assertEquals(20, RDMA_AND_NEGOTIATION.extensionLength());
        assertEquals(20, RDMA_NEGOTIATION.extensionLength());
    }

    @Test
    void decodesS1ToS5() {
        EmbeddedChannel ch = ShimChannels.started(RDMA_AND_NEGOTIATION, RDMA_AND_NEGOTIATION);
        for (Object[] v : SctpVectors.RDMA) {
            byte[] wire = bytes((String) v[0]);
            assertTrue(ch.writeInbound(message(wire)));
            PlacementChunk c = ch.readInbound();
            assertEquals(v[1], c.mode());
            assertEquals(v[2], c.flags());
            assertEquals(v[3], c.tag());
            assertEquals(v[4], c.offset());
            assertEquals(v[5], c.aws());
            assertEquals(0, c.stream());
            assertEquals(0, c.ppid());
            assertTrue(c.isUnordered());
            assertArrayEquals(Arrays.copyOfRange(wire, 20, wire.length), readable(c.content()));
            c.release();
        }
        assertTrue(ShimChannels.errors(ch).seen.isEmpty());
        assertFalse(ch.finish());
    }

    @Test
    void encodesS1ToS5WithAwsOneToFive() {
        EmbeddedChannel ch = ShimChannels.started(RDMA_AND_NEGOTIATION, RDMA_AND_NEGOTIATION);
        for (Object[] v : SctpVectors.RDMA) {
            byte[] wire = bytes((String) v[0]);
            ChannelFuture f = ch.writeOneOutbound(PlacementChunk.outbound((PlacementMode) v[1], (int) v[2], (int) v[3],
                    (long) v[4], Unpooled.wrappedBuffer(Arrays.copyOfRange(wire, 20, wire.length))));
            ch.flushOutbound();
            assertTrue(f.isSuccess(), () -> String.valueOf(f.cause()));
            SctpMessage m = ch.readOutbound();
            assertArrayEquals(wire, readable(m.content()), (String) v[0]);
            assertEquals(0, m.streamIdentifier());
            assertEquals(0, m.protocolIdentifier());
            assertTrue(m.isUnordered());
            assertTrue(m.content().isDirect(), "one direct buffer per message (§12.1)");
            assertEquals(1, m.content().nioBufferCount());
            m.release();
        }
        assertFalse(ch.finish());
    }

    @Test
    void s6DdpWithTagBothWays() {
        EmbeddedChannel ch = ShimChannels.started(DDP_WITH_TAG, DDP_WITH_TAG);
        byte[] wire = bytes(SctpVectors.S6);
        ch.writeInbound(message(wire));
        PlacementChunk c = ch.readInbound();
        assertEquals(PlacementMode.DDP_WITH_TAG, c.mode());
        assertEquals(PlacementFlags.NOTIFY_ON_COMPLETION, c.flags());
        assertEquals(7, c.tag());
        assertEquals(0x400, c.offset());
        assertEquals(PlacementChunk.NO_AWS, c.aws());
        assertArrayEquals("0123456789".getBytes(), readable(c.content()));
        ch.writeOutbound(c); // the same chunk back out: the same 26 octets
        SctpMessage m = ch.readOutbound();
        assertArrayEquals(wire, readable(m.content()));
        m.release();
        assertFalse(ch.finish());
    }

    /**
     * The digest's §4.3 matrix, written out: what a receiver does with each mode from each sender
     * indication. "ok" = delivered (R5 for placing modes, R6 for NO_PLACEMENT), else the error.
     */
    private static final String[][] MATRIX = {
        // NO_PLACEMENT, DDP_MODE, DDP_WITH_TAG_MODE, RDMA_PLACEMENT, 4, 0xFFFFFF
        {"ok", "ok", "C4", "C5", "C6", "C6"}, // DDP
        {"ok", "C3", "ok", "C5", "C6", "C6"}, // DDP_WITH_TAG
        {"C2", "C3", "C4", "ok", "C6", "C6"}, // RDMA_ONLY
        {"ok", "C3", "C4", "ok", "C6", "C6"}, // RDMA_AND_NEGOTIATION
        {"ok", "C3", "C4", "C5", "C6", "C6"}, // RDMA_NEGOTIATION
    };
    private static final int[] MODES = {0, 1, 2, 3, 4, 0xFFFFFF};

    @Test
    void everyCellOfTheIndicationModeMatrix() {
        for (SctpIndication peer : SctpIndication.values()) {
            for (int m = 0; m < MODES.length; m++) {
                String expected = MATRIX[peer.value() - 1][m];
                EmbeddedChannel ch = ShimChannels.started(RDMA_AND_NEGOTIATION, peer);
                byte[] wire = new byte[peer.extensionLength() + 3];
                wire[0] = (byte) (MODES[m] >>> 16);
                wire[1] = (byte) (MODES[m] >>> 8);
                wire[2] = (byte) MODES[m];
                if (peer.carriesAws()) {
                    wire[19] = 1;
                }
                ch.writeInbound(message(wire));
                String cell = peer + " x mode " + MODES[m];
                if (expected.equals("ok")) {
                    PlacementChunk c = ch.readInbound();
                    assertEquals(MODES[m], c.mode().value(), cell);
                    assertEquals(3, c.content().readableBytes(), cell);
                    assertEquals(MODES[m] != 0, c.mode().places(), cell); // R5 path vs R6 path
                    c.release();
                    assertEquals(0, ShimChannels.aborts(ch), cell);
                } else {
                    assertNull(ch.readInbound(), cell);
                    assertEquals(expected, ShimChannels.errors(ch).only().id(), cell);
                    assertEquals(1, ShimChannels.aborts(ch), cell + ": aborted");
                }
                ch.finishAndReleaseAll();
            }
        }
    }

    @Test
    void nothingDeliveredAfterAnError() {
        EmbeddedChannel ch = ShimChannels.started(RDMA_AND_NEGOTIATION, RDMA_AND_NEGOTIATION);
        ch.writeInbound(message(new byte[5]));
        assertEquals(SctpShimError.C1, ShimChannels.errors(ch).only());
        SctpMessage good = message(bytes(SctpVectors.S1));
        ch.writeInbound(good);
        assertNull(ch.readInbound());
        assertEquals(0, good.refCnt());
        assertEquals(1, ShimChannels.errors(ch).seen.size());
        ch.finishAndReleaseAll();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 4, 15, 16, 19})
    void shortMessagesFromAnRdmaSender(int length) {
        EmbeddedChannel ch = ShimChannels.started(RDMA_AND_NEGOTIATION, RDMA_AND_NEGOTIATION);
        ch.writeInbound(message(Arrays.copyOf(bytes(SctpVectors.S1), length)));
        assertNull(ch.readInbound());
        assertEquals(SctpShimError.C1, ShimChannels.errors(ch).only());
        assertEquals(1, ShimChannels.aborts(ch));
        ch.finishAndReleaseAll();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 3, 15})
    void shortMessagesFromADdpSender(int length) {
        EmbeddedChannel ch = ShimChannels.started(DDP_WITH_TAG, DDP_WITH_TAG);
        ch.writeInbound(message(Arrays.copyOf(bytes(SctpVectors.S6), length)));
        assertEquals(SctpShimError.C1, ShimChannels.errors(ch).only());
        ch.finishAndReleaseAll();
    }

    @Test
    void extensionOnlyMessageIsDeliveredWithNoData() {
        EmbeddedChannel ch = ShimChannels.started(DDP_WITH_TAG, DDP_WITH_TAG);
        ch.writeInbound(message(Arrays.copyOf(bytes(SctpVectors.S6), 16)));
        PlacementChunk c = ch.readInbound();
        assertEquals(0, c.content().readableBytes());
        c.release();
        assertFalse(ch.finish());
    }

    @Test
    void oversizeMessageIsC10() {
        SctpSettings s = SctpSettings.builder().maxChunkUserData(100).build();
        EmbeddedChannel ch = ShimChannels.started(RDMA_AND_NEGOTIATION, RDMA_AND_NEGOTIATION, s);
        byte[] wire = Arrays.copyOf(bytes(SctpVectors.S1), 101);
        ch.writeInbound(message(wire));
        assertEquals(SctpShimError.C10, ShimChannels.errors(ch).only());
        ch.finishAndReleaseAll();
    }

    @Test
    void reservedFlagsAndOrderedDeliveryAreAccepted() {
        EmbeddedChannel ch = ShimChannels.started(RDMA_AND_NEGOTIATION, RDMA_AND_NEGOTIATION);
        byte[] wire = bytes(SctpVectors.S1);
        wire[3] = (byte) 0x9F; // A plus all reserved bits
        ch.writeInbound(new SctpMessage(0, 7, false, Unpooled.wrappedBuffer(wire)));
        PlacementChunk c = ch.readInbound();
        assertTrue(c.hasFlag(PlacementFlags.ACK_REQUESTED));
        assertFalse(c.isUnordered());
        assertEquals(7, c.stream());
        c.release();
        assertFalse(ch.finish());
    }

    @Test
    void senderRuleS1RefusesUnplacedMessagesOfAnRdmaOnlySender() {
        EmbeddedChannel ch = ShimChannels.started(RDMA_ONLY, RDMA_AND_NEGOTIATION);
        ByteBuf data = Unpooled.wrappedBuffer(new byte[4]);
        ChannelFuture f = ch.writeOneOutbound(PlacementChunk.outbound(PlacementMode.NO_PLACEMENT, 0, 0, 0, data));
        ch.flushOutbound();
        assertEquals(SctpShimError.S1, ((SctpShimException) f.cause()).error());
        assertEquals(0, data.refCnt());
        assertNull(ch.readOutbound());
        assertTrue(ch.isOpen());
        assertFalse(ch.finish());
    }

    @Test
    void senderRuleS2RefusesPlacementOnANegotiationAssociation() {
        EmbeddedChannel ch = ShimChannels.started(RDMA_NEGOTIATION, RDMA_AND_NEGOTIATION);
        ChannelFuture f = ch.writeOneOutbound(PlacementChunk.outbound(PlacementMode.RDMA_PLACEMENT, 0, 1, 0,
                Unpooled.wrappedBuffer(new byte[4])));
        ch.flushOutbound();
        assertEquals(SctpShimError.S2, ((SctpShimException) f.cause()).error());
        assertNull(ch.readOutbound());
        // what it may send: NO_PLACEMENT, offset forced to 0 (S4)
        ch.writeOutbound(PlacementChunk.outbound(PlacementMode.NO_PLACEMENT, 0, 9, 1234, Unpooled.buffer(0)));
        SctpMessage m = ch.readOutbound();
        assertArrayEquals(bytes("00 00 00 00 00 00 00 09 00 00 00 00 00 00 00 00 00 00 00 01"), readable(m.content()));
        m.release();
        assertFalse(ch.finish());
    }

    @Test
    void otherModesOutsideOurIndicationAreRefused() {
        EmbeddedChannel ch = ShimChannels.started(RDMA_AND_NEGOTIATION, RDMA_AND_NEGOTIATION);
        ChannelFuture f = ch.writeOneOutbound(PlacementChunk.outbound(PlacementMode.DDP, 0, 1, 0, Unpooled.buffer(0)));
        ch.flushOutbound();
        assertEquals(SctpShimError.S3, ((SctpShimException) f.cause()).error());
        SctpSettings s = SctpSettings.builder().maxChunkUserData(40).build();
        EmbeddedChannel small = ShimChannels.started(RDMA_AND_NEGOTIATION, RDMA_AND_NEGOTIATION, s);
        f = small.writeOneOutbound(PlacementChunk.outbound(PlacementMode.NO_PLACEMENT, 0, 0, 0,
                Unpooled.wrappedBuffer(new byte[21])));
        small.flushOutbound();
        assertInstanceOf(SctpShimException.class, f.cause());
        assertEquals(20, new SctpPlacementCodec(s).maxData());
        assertFalse(ch.finish());
        assertFalse(small.finish());
    }

    @Test
    void awsWrapsFromMaxToZeroOnSend() {
        EmbeddedChannel ch = ShimChannels.started(RDMA_AND_NEGOTIATION, RDMA_AND_NEGOTIATION);
        // AWS stamping is the codec's own counter; the first is 1 and the 2^32-th is 0
        for (int i = 1; i <= 3; i++) {
            ch.writeOutbound(PlacementChunk.outbound(PlacementMode.NO_PLACEMENT, 0, 0, 0, Unpooled.buffer(0)));
            SctpMessage m = ch.readOutbound();
            assertEquals(i, m.content().getInt(16));
            m.release();
        }
        assertFalse(ch.finish());
    }
}
