package dev.iwarp.ift;

import dev.iwarp.testkit.ChannelOctets;
import dev.iwarp.framing.Crc32c;
import dev.iwarp.ift.IftTestUtil.RefFrame;
import dev.iwarp.testkit.Splits;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.EncoderException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static dev.iwarp.testkit.ChannelOctets.buf;
import static dev.iwarp.testkit.ChannelOctets.drainInbound;
import static dev.iwarp.testkit.ChannelOctets.drainOutbound;
import static dev.iwarp.ift.IftVectors.F1;
import static dev.iwarp.ift.IftVectors.F2;
import static dev.iwarp.ift.IftVectors.F3;
import static dev.iwarp.ift.IftVectors.F4;
import static dev.iwarp.ift.IftVectors.F5;
import static dev.iwarp.ift.IftVectors.F6;
import static dev.iwarp.ift.IftVectors.HELLO;
import static dev.iwarp.ift.IftVectors.PAYLOAD16;
import static dev.iwarp.ift.IftVectors.READ_REQUEST;
import static dev.iwarp.ift.IftVectors.READ_REQUEST_HEADER;
import static dev.iwarp.ift.IftVectors.SEND_HEADER;
import static dev.iwarp.ift.IftVectors.TAGGED_WRITE_HEADER;
import static dev.iwarp.ift.IftVectors.concat;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link IftFramer} in both directions against the vectors F1..F6 (and the fourth CRC variant, payload
 * CRC only, assembled from them), every decode fed whole, split at every byte boundary and in 1-octet
 * pieces; zero-copy in and out; a random stream against an independent reference encoder.
 */
class IftFramerTest {

    /** Node A of AI-1 sending to node B of AI-2: its frames carry B's VTag 0xC3D4. */
    static IftParameters nodeA(boolean hc, boolean pc) {
        IftAdaptionIndication local = IftAdaptionIndication.builder().flag(IftFlag.R, true).flag(IftFlag.HC, hc)
                .flag(IftFlag.PC, pc).senderVTag(IftVectors.VTAG_A).build();
        IftAdaptionIndication peer = IftAdaptionIndication.builder().flags(0xF0000000).senderVTag(IftVectors.VTAG_B).build();
        return IftParameters.of(IftRole.NODE_A, local, peer, IftSettings.defaults());
    }

    /** Node B of AI-2 receiving node A's frames with HC/PC as given, checking as given. */
    static IftParameters nodeB(boolean hc, boolean pc, boolean checkH, boolean checkP, IftSettings s) {
        IftAdaptionIndication local = IftAdaptionIndication.builder().flags(0xF0000000).flag(IftFlag.IH, !checkH)
                .flag(IftFlag.IP, !checkP).senderVTag(IftVectors.VTAG_B).build();
        IftAdaptionIndication peer = IftAdaptionIndication.builder().flag(IftFlag.R, true).flag(IftFlag.HC, hc)
                .flag(IftFlag.PC, pc).senderVTag(IftVectors.VTAG_A).build();
        return IftParameters.of(IftRole.NODE_B, local, peer, s);
    }

    static EmbeddedChannel sender(boolean hc, boolean pc) {
        return new EmbeddedChannel(new IftFramer(nodeA(hc, pc)));
    }

    static EmbeddedChannel receiver(boolean hc, boolean pc) {
        return new EmbeddedChannel(new IftFramer(nodeB(hc, pc, true, true, IftSettings.defaults())));
    }

    static byte[] encode(EmbeddedChannel tx, byte[]... ulpdus) {
        for (byte[] u : ulpdus) {
            tx.writeOutbound(buf(u));
        }
        return drainOutbound(tx);
    }

    /** Feeds {@code stream} to a fresh receiver in every split and checks the ULPDUs delivered. */
    static void assertDecodesEverySplit(byte[] stream, boolean hc, boolean pc, List<byte[]> expected) {
        Splits.forEachSplit(stream, pieces -> {
            EmbeddedChannel rx = receiver(hc, pc);
            for (ByteBuf piece : pieces) {
                rx.writeInbound(piece);
            }
            List<byte[]> got = drainInbound(rx);
            assertEquals(expected.size(), got.size(), "ULPDUs delivered");
            for (int i = 0; i < expected.size(); i++) {
                assertArrayEquals(expected.get(i), got.get(i), "ULPDU " + i);
            }
            assertFalse(rx.finish(), "nothing left over, no exception");
        });
    }

    // ------------------------------------------------------------ known answers, both directions

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "F1 zero-length RDMA Write HC+PC, F1, true,  true",
            "F2 Send hello HC+PC,             F2, true,  true",
            "F3 RDMA Write 16 octets HC+PC,   F3, true,  true",
            "F4 Read Request HC+PC,           F4, true,  true",
            "F5 Send hello no CRCs,           F5, false, false",
            "F6 Send hello header CRC only,   F6, true,  false",
            "F2 payload CRC only (F5 + F2's payload CRC), F2P, false, true",
    })
    void vectorEncodesByteExactAndDecodesEverySplit(String name, String which, boolean hc, boolean pc) {
        byte[] ulpdu = ulpdu(which);
        byte[] frame = frame(which);
        EmbeddedChannel tx = sender(hc, pc);
        assertArrayEquals(frame, encode(tx, ulpdu));
        assertFalse(tx.finish());
        assertDecodesEverySplit(frame, hc, pc, List.of(ulpdu));
    }

    static byte[] ulpdu(String which) {
        switch (which) {
            case "F1":
                return TAGGED_WRITE_HEADER;
            case "F3":
                return concat(TAGGED_WRITE_HEADER, PAYLOAD16);
            case "F4":
                return concat(READ_REQUEST_HEADER, READ_REQUEST);
            default:
                return concat(SEND_HEADER, HELLO);
        }
    }

    static byte[] frame(String which) {
        switch (which) {
            case "F1":
                return F1;
            case "F2":
                return F2;
            case "F3":
                return F3;
            case "F4":
                return F4;
            case "F5":
                return F5;
            case "F6":
                return F6;
            default: // payload CRC only: F5's octets, then F2's payload CRC 4c bb 71 9a
                return concat(F5, new byte[] {0x4c, (byte) 0xbb, 0x71, (byte) 0x9a});
        }
    }

    @Test
    void f1ToF4AsOneStreamDecodeEverySplit() {
        byte[] stream = concat(F1, F2, F3, F4);
        EmbeddedChannel tx = sender(true, true);
        assertArrayEquals(stream, encode(tx, ulpdu("F1"), ulpdu("F2"), ulpdu("F3"), ulpdu("F4")));
        assertFalse(tx.finish());
        assertDecodesEverySplit(stream, true, true, List.of(ulpdu("F1"), ulpdu("F2"), ulpdu("F3"), ulpdu("F4")));
    }

    @Test
    void headerCrcCoversTheVTagAndTheResidueHolds() {
        // Q3 as decided: octets 0 .. 6+header_size-1; the script's "VTag left out" value differs
        assertEquals(0xDD3E75A5, IftTestUtil.crc32c(F2, 0, 24));
        assertTrue(0xDD3E75A5 != IftVectors.F2_HEADER_CRC_WITHOUT_VTAG);
        // CRC32C over the covered octets and their own CRC field is the constant residue
        assertEquals(Crc32c.RESIDUE, IftTestUtil.crc32c(F2, 0, 28));
        assertEquals(Crc32c.RESIDUE, IftTestUtil.crc32c(F2, 28, 9));
    }

    @Test
    void residueShortcutAgreesWithCompareForRandomFrames() {
        // CRC32C over covered octets followed by their CRC field is 0x48674BC7 exactly when they match
        Random rnd = new Random(99);
        EmbeddedChannel tx = sender(true, true);
        for (int i = 0; i < 200; i++) {
            byte[] u = new byte[18 + rnd.nextInt(400)];
            rnd.nextBytes(u);
            u[0] &= 0x7F;
            byte[] f = encode(tx, u);
            int hs = 18;
            int ps = u.length - hs;
            assertEquals(Crc32c.RESIDUE, IftTestUtil.crc32c(f, 0, 6 + hs + 4), "header CRC residue");
            assertEquals(Crc32c.RESIDUE, IftTestUtil.crc32c(f, 6 + hs + 4, ps + 4), "payload CRC residue");
            f[rnd.nextInt(6 + hs)] ^= (byte) (1 << rnd.nextInt(8));
            assertTrue(IftTestUtil.crc32c(f, 0, 6 + hs + 4) != Crc32c.RESIDUE, "a flipped bit breaks the residue");
        }
        assertFalse(tx.finish());
    }

    // ------------------------------------------------------------ zero copy

    @Test
    void inboundUlpduIsASliceOfTheReceivedOctetsNotACopy() {
        for (boolean hc : new boolean[] {false, true}) {
            byte[] wire = hc ? F2.clone() : F5.clone();
            EmbeddedChannel rx = receiver(hc, hc);
            rx.writeInbound(Unpooled.wrappedBuffer(wire));
            ByteBuf ulpdu = rx.readInbound();
            assertEquals(hc, ulpdu instanceof CompositeByteBuf, "composite exactly when a header CRC sits between");
            int payloadAt = 6 + 18 + (hc ? 4 : 0);
            wire[payloadAt] = 'J'; // the received octets change: the ULPDU sees it
            assertEquals('J', ulpdu.getByte(ulpdu.readerIndex() + 18));
            ulpdu.release();
            assertFalse(rx.finish());
        }
    }

    @Test
    void outboundPayloadIsTheUlpduItselfAfterACopiedHead() {
        EmbeddedChannel tx = sender(true, true);
        ByteBuf ulpdu = buf(ulpdu("F3"));
        tx.writeOutbound(ulpdu);
        ByteBuf head = tx.readOutbound();
        ByteBuf payload = tx.readOutbound();
        ByteBuf trailer = tx.readOutbound();
        assertEquals(24, head.readableBytes());
        assertSame(ulpdu, payload, "the payload is not sliced or copied");
        assertEquals(16, payload.readableBytes());
        assertEquals(4, trailer.readableBytes());
        head.release();
        payload.release();
        trailer.release();
        assertFalse(tx.finish());
    }

    // ------------------------------------------------------------ random streams against the reference

    @ParameterizedTest(name = "HC={0} PC={1}")
    @CsvSource({"false, false", "true, false", "false, true", "true, true"})
    void randomStreamMatchesTheReferenceEncoderAndRoundTrips(boolean hc, boolean pc) {
        Random rnd = new Random(12 + (hc ? 1 : 0) + (pc ? 2 : 0));
        List<byte[]> ulpdus = new ArrayList<>();
        java.io.ByteArrayOutputStream ref = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < 60; i++) {
            boolean tagged = rnd.nextBoolean();
            byte[] header = new byte[tagged ? 14 : 18];
            rnd.nextBytes(header);
            header[0] = (byte) (tagged ? header[0] | 0x80 : header[0] & 0x7F);
            int n = i % 7 == 0 ? 0 : rnd.nextInt(i % 5 == 0 ? 65517 : 300);
            byte[] payload = new byte[n];
            rnd.nextBytes(payload);
            ulpdus.add(concat(header, payload));
            ref.writeBytes(new RefFrame().crcs(hc, pc).build(header, payload));
        }
        EmbeddedChannel tx = sender(hc, pc);
        byte[] stream = encode(tx, ulpdus.toArray(new byte[0][]));
        assertArrayEquals(ref.toByteArray(), stream);
        assertFalse(tx.finish());

        // decode in random pieces (every-split decoding is covered by the vectors)
        EmbeddedChannel rx = receiver(hc, pc);
        for (int at = 0; at < stream.length; ) {
            int n = Math.min(stream.length - at, 1 + rnd.nextInt(3000));
            rx.writeInbound(Unpooled.wrappedBuffer(stream, at, n));
            at += n;
        }
        List<byte[]> got = drainInbound(rx);
        assertEquals(ulpdus.size(), got.size());
        for (int i = 0; i < got.size(); i++) {
            assertArrayEquals(ulpdus.get(i), got.get(i), "ULPDU " + i);
        }
        assertFalse(rx.finish());
    }

    @Test
    void largestFramesBothHeaderTypes() {
        for (byte[] header : new byte[][] {TAGGED_WRITE_HEADER, SEND_HEADER}) {
            byte[] payload = new byte[0xFFFF];
            new Random(3).nextBytes(payload);
            byte[] u = concat(header, payload);
            EmbeddedChannel tx = sender(true, true);
            byte[] wire = encode(tx, u);
            assertEquals(IftFramer.frameLength(header.length, 0xFFFF, true, true), wire.length);
            assertArrayEquals(new RefFrame().build(header, payload), wire);
            EmbeddedChannel rx = receiver(true, true);
            rx.writeInbound(Unpooled.wrappedBuffer(wire));
            assertArrayEquals(u, drainInbound(rx).get(0));
            assertFalse(rx.finish() || tx.finish());
        }
    }

    // ------------------------------------------------------------ outbound rules

    @Test
    void ulpduThatCannotBeOneFrameIsRefusedAndReleased() {
        EmbeddedChannel tx = sender(true, true);
        ByteBuf shortOne = buf(new byte[] {(byte) 0xC1, 0x40, 0, 1}); // tagged header needs 14 octets
        ChannelFuture f = tx.writeOneOutbound(shortOne);
        tx.flushOutbound();
        assertInstanceOf(EncoderException.class, f.cause());
        assertEquals(0, shortOne.refCnt());
        ByteBuf tooLong = buf(concat(SEND_HEADER, new byte[0x10000]));
        ChannelFuture g = tx.writeOneOutbound(tooLong);
        assertInstanceOf(EncoderException.class, g.cause());
        assertEquals(0, tooLong.refCnt());
        assertEquals(0, drainOutbound(tx).length);
        assertFalse(tx.finish());
    }

    @Test
    void emptyBufferIsNoUlpduAndPassesThrough() {
        EmbeddedChannel tx = sender(true, true);
        tx.writeOutbound(Unpooled.EMPTY_BUFFER);
        ByteBuf out = tx.readOutbound();
        assertEquals(0, out.readableBytes());
        assertFalse(tx.finish());
    }

    @Test
    void closeAfterFlushSendsEverythingThenClosesWithoutAnotherFrame() {
        IftFramer framer = new IftFramer(nodeA(true, true));
        EmbeddedChannel tx = new EmbeddedChannel(framer);
        tx.write(buf(ulpdu("F2")));
        tx.write(buf(ulpdu("F4")));
        assertFalse(framer.isTxHeld());
        framer.closeAfterFlush();
        framer.closeAfterFlush(); // idempotent
        tx.runPendingTasks();
        assertFalse(tx.isOpen());
        assertArrayEquals(concat(F2, F4), drainOutbound(tx));
        assertFalse(tx.finish());
    }

    @Test
    void mulpduIsTheConfiguredMaximumOrEmssAlignedWhenGrantingSpeculativePlacement() {
        assertEquals(65535, new IftFramer(nodeA(true, true)).mulpdu());
        IftSettings sp = IftSettings.builder().grantSpeculativePlacement(true).emss(1448).build();
        IftAdaptionIndication local = IftNegotiation.localIndication(IftRole.NODE_A, sp, 1, null);
        IftAdaptionIndication peer = IftAdaptionIndication.builder().flags(0xF0000000).build();
        assertEquals(1448 - 6 - 4 - 4, IftParameters.of(IftRole.NODE_A, local, peer, sp).mulpdu()); // 1434
        IftSettings noCrc = sp.toBuilder().sendCrcs(false, true).build();
        local = IftNegotiation.localIndication(IftRole.NODE_A, noCrc, 1, null);
        assertEquals(1448 - 6 - 4, IftParameters.of(IftRole.NODE_A, local, peer, noCrc).mulpdu());
        IftSettings tiny = sp.toBuilder().emss(130).build();
        local = IftNegotiation.localIndication(IftRole.NODE_A, tiny, 1, null);
        assertEquals(128, IftParameters.of(IftRole.NODE_A, local, peer, tiny).mulpdu());
    }
}
