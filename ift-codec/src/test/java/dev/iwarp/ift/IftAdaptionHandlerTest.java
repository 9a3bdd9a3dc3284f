package dev.iwarp.ift;

import dev.iwarp.testkit.ChannelOctets;
import dev.iwarp.ift.IftTestUtil.Recorder;
import dev.iwarp.testkit.Splits;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelId;
import io.netty.channel.DefaultChannelId;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static dev.iwarp.testkit.ChannelOctets.buf;
import static dev.iwarp.testkit.ChannelOctets.drainOutbound;
import static dev.iwarp.ift.IftVectors.AI1;
import static dev.iwarp.ift.IftVectors.AI2;
import static dev.iwarp.ift.IftVectors.AI3;
import static dev.iwarp.ift.IftVectors.F1;
import static dev.iwarp.ift.IftVectors.F2;
import static dev.iwarp.ift.IftVectors.F3;
import static dev.iwarp.ift.IftVectors.HELLO;
import static dev.iwarp.ift.IftVectors.SEND_HEADER;
import static dev.iwarp.ift.IftVectors.concat;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link IftAdaptionHandler} alone, the peer played by hand-written octets: the indications the
 * vectors name (AI-1 from node A, AI-2 from node B), the validation order and which failures node B
 * answers before closing, timeouts, mis-starts, held writes, the hand-over to the framer.
 */
class IftAdaptionHandlerTest {

    static final class Side {
        final IftAdaptionHandler ift;
        final Recorder app = new Recorder();
        final EmbeddedChannel ch;

        Side(IftAdaptionHandler ift) {
            this.ift = ift;
            this.ch = new EmbeddedChannel();
            ch.freezeTime(); // the adaption timer starts on the frozen clock: timeouts to the millisecond
            ch.pipeline().addLast(ift, app);
        }

        IftAdaptionException failure() {
            assertNotNull(app.completion, "completion event fired");
            assertFalse(app.completion.isSuccess());
            assertSame(app.completion.cause(), ift.adaptionFuture().cause());
            return assertInstanceOf(IftAdaptionException.class, app.completion.cause());
        }

        IftParameters parameters() {
            assertNotNull(app.completion, "completion event fired");
            assertTrue(app.completion.isSuccess(), () -> String.valueOf(app.completion.cause()));
            assertSame(app.completion.parameters(), ift.adaptionFuture().getNow());
            return app.completion.parameters();
        }
    }

    /** Node A with AI-1's VTag and the defaults, whose phase 0 is therefore AI-1. */
    static Side nodeA(IftSettings.Builder b) {
        return new Side(IftAdaptionHandler.nodeA(b.vTag(IftVectors.VTAG_A).build()));
    }

    /** Node B with AI-2's VTag. */
    static Side nodeB(IftSettings.Builder b) {
        return new Side(IftAdaptionHandler.nodeB(b.vTag(IftVectors.VTAG_B).build()));
    }

    static IftAdaptionIndication ind(byte[] v) {
        return IftAdaptionIndicationTest.decodeWhole(v);
    }

    static byte[] indication(IftAdaptionIndication.Builder b) {
        return b.build().toByteArray();
    }

    // ------------------------------------------------------------ the vectors' exchange

    @Test
    void nodeASendsAi1AndEstablishesOnAi2FollowedByFramesInEverySplit() {
        // node B's frames to node A carry A's VTag 0x1A2B
        IftTestUtil.RefFrame toA = new IftTestUtil.RefFrame();
        toA.vTag = IftVectors.VTAG_A;
        byte[] stream = concat(AI2, toA.build(SEND_HEADER, HELLO), toA.build(IftVectors.TAGGED_WRITE_HEADER, new byte[0]));
        Splits.forEachSplit(stream, pieces -> {
            Side a = nodeA(IftSettings.builder());
            assertArrayEquals(AI1, drainOutbound(a.ch), "phase 0 is AI-1 byte for byte");
            int fed = 0;
            for (ByteBuf piece : pieces) {
                fed += piece.readableBytes();
                a.ch.writeInbound(piece);
                assertEquals(fed >= 64, a.app.completion != null, "established exactly at octet 64");
            }
            IftParameters p = a.parameters();
            assertEquals(IftRole.NODE_A, p.role());
            assertEquals(IftMode.RDMA, p.mode());
            assertEquals(0x1A2B, p.localVTag());
            assertEquals(0xC3D4, p.peerVTag());
            assertTrue(p.txHeaderCrc() && p.txPayloadCrc() && p.rxHeaderCrcChecked() && p.rxPayloadCrcChecked());
            assertEquals(65535, p.mulpdu());
            assertEquals(1, p.ddpVersion());
            assertNull(a.ch.pipeline().get(IftAdaptionHandler.class), "the handler removed itself");
            assertNotNull(a.ch.pipeline().get(IftAdaptionHandler.FRAMER_NAME));
            assertEquals(List.of("established", "read", "read"), a.app.order);
            assertArrayEquals(concat(SEND_HEADER, HELLO), a.app.received.get(0));
            assertArrayEquals(IftVectors.TAGGED_WRITE_HEADER, a.app.received.get(1));
            assertFalse(a.ch.finishAndReleaseAll());
        });
    }

    @Test
    void framesWithTheOtherSidesVTagBehindPhase1AreF3() {
        Side a = nodeA(IftSettings.builder());
        drainOutbound(a.ch);
        a.ch.writeInbound(Unpooled.wrappedBuffer(concat(AI2, F1))); // F1 carries B's own VTag
        a.parameters();
        assertEquals(IftError.VTAG_MISMATCH, a.app.onlyException().error());
        assertTrue(a.ch.isOpen());
        assertFalse(a.ch.finishAndReleaseAll());
    }

    @Test
    void nodeBAnswersAi1WithAi2AndFramesThatFollowInTheSameRead() {
        byte[] stream = concat(AI1, F1, F2, F3);
        Splits.forEachSplit(stream, pieces -> {
            Side b = nodeB(IftSettings.builder());
            assertEquals(0, drainOutbound(b.ch).length, "node B speaks only after phase 0");
            for (ByteBuf piece : pieces) {
                b.ch.writeInbound(piece);
            }
            assertArrayEquals(AI2, drainOutbound(b.ch), "phase 1 is AI-2 byte for byte");
            IftParameters p = b.parameters();
            assertEquals(IftRole.NODE_B, p.role());
            assertEquals(0xC3D4, p.localVTag());
            assertEquals(0x1A2B, p.peerVTag());
            assertEquals(List.of("established", "read", "read", "read"), b.app.order);
            assertArrayEquals(IftVectors.TAGGED_WRITE_HEADER, b.app.received.get(0));
            assertArrayEquals(concat(SEND_HEADER, HELLO), b.app.received.get(1));
            assertFalse(b.ch.finishAndReleaseAll());
        });
    }

    @Test
    void nodeAFramesHeldUlpdusAfterPhase1AndTheyCountTowardWritability() {
        Side a = nodeA(IftSettings.builder());
        a.ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(8, 16));
        drainOutbound(a.ch);
        ChannelFuture sent = a.ch.writeAndFlush(buf(concat(SEND_HEADER, HELLO)));
        assertFalse(sent.isDone());
        assertEquals(0, drainOutbound(a.ch).length, "nothing before node B's VTag is known");
        assertFalse(a.ch.isWritable(), "held ULPDUs count toward writability");
        a.ch.writeInbound(Unpooled.wrappedBuffer(AI2));
        assertArrayEquals(F2, drainOutbound(a.ch), "the held Send goes out as vector F2");
        assertTrue(sent.isSuccess());
        assertTrue(a.ch.isWritable());
        assertFalse(a.ch.finishAndReleaseAll());
    }

    @Test
    void nodeBFramesHeldUlpdusRightAfterItsPhase1() {
        Side b = nodeB(IftSettings.builder());
        b.ch.writeAndFlush(buf(concat(SEND_HEADER, HELLO)));
        b.ch.writeInbound(Unpooled.wrappedBuffer(AI1));
        byte[] out = drainOutbound(b.ch);
        assertArrayEquals(AI2, Arrays.copyOf(out, 64));
        // B's frames carry A's VTag 0x1A2B
        IftTestUtil.RefFrame f = new IftTestUtil.RefFrame();
        f.vTag = IftVectors.VTAG_A;
        assertArrayEquals(f.build(SEND_HEADER, HELLO), Arrays.copyOfRange(out, 64, out.length));
        assertFalse(b.ch.finishAndReleaseAll());
    }

    @Test
    void failedAdaptionFailsAndReleasesHeldWrites() {
        Side a = nodeA(IftSettings.builder());
        drainOutbound(a.ch);
        ByteBuf ulpdu = buf(concat(SEND_HEADER, HELLO));
        ChannelFuture f = a.ch.writeAndFlush(ulpdu);
        a.ch.writeInbound(Unpooled.wrappedBuffer(AI1)); // A/A
        assertSame(a.failure(), f.cause());
        assertEquals(0, ulpdu.refCnt());
        assertFalse(a.ch.finishAndReleaseAll());
    }

    // ------------------------------------------------------------ what node B answers before closing

    @Test
    void nodeBInRdmaModeAnswersDdpModeAi3WithItsPhase1ThenCloses() {
        Side b = nodeB(IftSettings.builder());
        b.ch.writeInbound(Unpooled.wrappedBuffer(AI3));
        assertEquals(IftError.MODE_MISMATCH, b.failure().error());
        IftAdaptionIndication answer = ind(drainOutbound(b.ch));
        assertEquals(1, answer.phase());
        assertTrue(answer.rdmaMode(), "node A learns B wants RDMA mode");
        assertTrue(answer.sendsHeaderCrc());
        assertFalse(answer.sendsPayloadCrc(), "AI-3 ignores payload CRCs: omitted");
        assertFalse(b.ch.isOpen());
        assertFalse(b.ch.finishAndReleaseAll());
    }

    @Test
    void nodeBInDdpModeAcceptsAi3() {
        Side b = nodeB(IftSettings.builder().mode(IftMode.DDP));
        b.ch.writeInbound(Unpooled.wrappedBuffer(AI3));
        IftParameters p = b.parameters();
        assertEquals(IftMode.DDP, p.mode());
        assertTrue(p.mayPlaceSpeculatively(), "AI-3 grants SP");
        assertFalse(p.peerMayPlaceSpeculatively());
        assertTrue(p.rxHeaderCrcChecked());
        assertFalse(p.rxPayloadCrcPresent());
        assertTrue(p.txHeaderCrc());
        assertFalse(p.txPayloadCrc(), "omitCrcsPeerIgnores");
        assertEquals(0xE0000000 & ~IftFlag.R.mask(), ind(drainOutbound(b.ch)).flags(), "PH|HC");
        assertFalse(b.ch.finishAndReleaseAll());
    }

    @Test
    void versionRules() {
        IftAdaptionIndication.Builder ai1 = ind(AI1).toBuilder();
        // a newer node A that stays compatible with 1 is accepted; we speak 1
        Side newer = nodeB(IftSettings.builder());
        newer.ch.writeInbound(Unpooled.wrappedBuffer(indication(ai1.version(2).bcVersion(1))));
        assertEquals(2, newer.parameters().peerIndication().version());
        assertEquals(1, ind(drainOutbound(newer.ch)).version());
        assertFalse(newer.ch.finishAndReleaseAll());

        // BC version 2: incompatible (MUST reject), well formed: answered, then closed
        Side incompatible = nodeB(IftSettings.builder());
        incompatible.ch.writeInbound(Unpooled.wrappedBuffer(indication(ai1.version(2).bcVersion(2))));
        assertEquals(IftError.INCOMPATIBLE_VERSION, incompatible.failure().error());
        assertEquals(64, drainOutbound(incompatible.ch).length);
        assertFalse(incompatible.ch.isOpen());
        assertFalse(incompatible.ch.finishAndReleaseAll());

        // version 0 or BC version 0: malformed, not answered
        for (int[] v : new int[][] {{0, 1}, {1, 0}, {0, 0}}) {
            Side zero = nodeB(IftSettings.builder());
            zero.ch.writeInbound(Unpooled.wrappedBuffer(indication(ai1.version(v[0]).bcVersion(v[1]))));
            assertEquals(IftError.MALFORMED_VERSION, zero.failure().error());
            assertEquals(0, drainOutbound(zero.ch).length);
            assertFalse(zero.ch.isOpen());
            assertFalse(zero.ch.finishAndReleaseAll());
        }

        // node A gets a phase 1 with BC version 2: closes, sends nothing more
        Side a = nodeA(IftSettings.builder());
        drainOutbound(a.ch);
        a.ch.writeInbound(Unpooled.wrappedBuffer(indication(ind(AI2).toBuilder().bcVersion(2))));
        assertEquals(IftError.INCOMPATIBLE_VERSION, a.failure().error());
        assertEquals(0, drainOutbound(a.ch).length);
        assertFalse(a.ch.isOpen());
        assertFalse(a.ch.finishAndReleaseAll());
    }

    @Test
    void validationOrderMagicCrcVersionPhaseThenBcVersion() {
        // version 0 and the wrong phase and BC version 2 at once: version 0 (A4) is checked first
        byte[] all = indication(ind(AI2).toBuilder().version(0).bcVersion(2));
        Side b = nodeB(IftSettings.builder());
        b.ch.writeInbound(Unpooled.wrappedBuffer(all));
        assertEquals(IftError.MALFORMED_VERSION, b.failure().error());
        assertFalse(b.ch.finishAndReleaseAll());
        // wrong phase before BC version
        Side b2 = nodeB(IftSettings.builder());
        b2.ch.writeInbound(Unpooled.wrappedBuffer(indication(ind(AI2).toBuilder().bcVersion(2))));
        assertEquals(IftError.WRONG_PHASE, b2.failure().error());
        assertEquals(0, drainOutbound(b2.ch).length, "a malformed phase 0 is not answered");
        assertFalse(b2.ch.finishAndReleaseAll());
        // a bad CRC hides everything else
        byte[] badCrc = all.clone();
        badCrc[63] ^= 1;
        Side b3 = nodeB(IftSettings.builder());
        b3.ch.writeInbound(Unpooled.wrappedBuffer(badCrc));
        assertEquals(IftError.INDICATION_CRC, b3.failure().error());
        assertFalse(b3.ch.finishAndReleaseAll());
    }

    @Test
    void ignoredFieldsAreIgnoredAndMarkersNeverEnabled() {
        byte[] reserved = new byte[44];
        reserved[0] = 1;
        reserved[43] = (byte) 0xFF;
        byte[] odd = indication(ind(AI1).toBuilder().flags(0x70000000 | IftFlag.SM.mask() | IftFlag.RM.mask() | 0x1234)
                .markerInterval(512).reserved(reserved));
        Side b = nodeB(IftSettings.builder());
        b.ch.writeInbound(Unpooled.wrappedBuffer(odd));
        IftParameters p = b.parameters();
        IftAdaptionIndication ours = ind(drainOutbound(b.ch));
        assertFalse(ours.willSendMarkers() || ours.wantsMarkers());
        assertEquals(0, ours.markerInterval());
        assertEquals(0, ours.reservedFlags());
        assertFalse(ours.hasNonZeroReservedOctets());
        assertFalse(p.markersTx() || p.markersRx());
        assertEquals(0x1234, p.peerIndication().reservedFlags());
        assertFalse(b.ch.finishAndReleaseAll());
    }

    // ------------------------------------------------------------ roles and upgrades

    @Test
    void roleFollowsTheConnectionDirectionByDefault() {
        IftSettings s = IftSettings.builder().vTag(7).build();
        IftAdaptionHandler client = new IftAdaptionHandler(s);
        EmbeddedChannel c = new EmbeddedChannel(client);
        assertEquals(IftRole.NODE_A, client.role());
        assertEquals(0, ind(drainOutbound(c)).phase());
        assertFalse(c.finishAndReleaseAll());

        EmbeddedChannel parent = new EmbeddedChannel();
        IftAdaptionHandler accepted = new IftAdaptionHandler(s);
        ChannelId id = DefaultChannelId.newInstance();
        EmbeddedChannel child = new EmbeddedChannel(parent, id, true, false, accepted);
        assertEquals(IftRole.NODE_B, accepted.role());
        assertEquals(0, drainOutbound(child).length);
        assertFalse(child.finishAndReleaseAll());
        assertFalse(parent.finishAndReleaseAll());
    }

    @Test
    void ulpUpgradeStartsAtTheNextOctetAfterStreamingModeOctets() {
        Recorder app = new Recorder();
        EmbeddedChannel ch = new EmbeddedChannel(app);
        ch.writeInbound(Unpooled.wrappedBuffer("STARTTLS-like upgrade please\r\n".getBytes()));
        assertEquals(1, app.received.size(), "streaming mode: plain octets to the ULP");
        IftAdaptionHandler ift = IftAdaptionHandler.nodeA(IftSettings.builder().vTag(IftVectors.VTAG_A).build());
        ch.pipeline().addFirst(ift);
        assertArrayEquals(AI1, drainOutbound(ch), "phase 0 goes out as soon as the handler is added");
        ch.writeInbound(Unpooled.wrappedBuffer(AI2));
        assertTrue(ift.adaptionFuture().isSuccess());
        assertFalse(ch.finishAndReleaseAll());
    }
}
