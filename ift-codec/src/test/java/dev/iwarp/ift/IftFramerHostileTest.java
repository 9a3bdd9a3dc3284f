package dev.iwarp.ift;

import dev.iwarp.testkit.ChannelOctets;
import dev.iwarp.ift.IftTestUtil.RefFrame;
import dev.iwarp.ift.IftTestUtil.Recorder;
import dev.iwarp.testkit.Splits;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import static dev.iwarp.ift.IftFramerTest.nodeA;
import static dev.iwarp.ift.IftFramerTest.nodeB;
import static dev.iwarp.testkit.ChannelOctets.buf;
import static dev.iwarp.testkit.ChannelOctets.drainOutbound;
import static dev.iwarp.ift.IftVectors.F2;
import static dev.iwarp.ift.IftVectors.F3;
import static dev.iwarp.ift.IftVectors.F5;
import static dev.iwarp.ift.IftVectors.HELLO;
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
 * Hostile frames against {@link IftFramer}: each of F1-F6 with the reason, the Terminate code and
 * whether a Terminate can still go out; a good frame before the bad one is delivered, nothing after
 * it; the connection is left open for RDMAP's Terminate (F1-F5). Each bad stream is also fed in every
 * split, so the error never depends on TCP segmentation.
 */
class IftFramerHostileTest {

    static final class Rx {
        final Recorder app = new Recorder();
        final EmbeddedChannel ch;

        Rx(IftParameters p) {
            ch = new EmbeddedChannel(new IftFramer(p), app);
        }

        Rx() {
            this(nodeB(true, true, true, true, IftSettings.defaults()));
        }
    }

    /** A good frame then {@code bad} then another good frame: one ULPDU, one error, nothing more, open. */
    static void assertRejectedEverySplit(byte[] bad, IftError error, int terminateCode, IftParameters p) {
        byte[] stream = concat(F2Of(p), bad, F2Of(p));
        Splits.forEachSplit(stream, pieces -> {
            Rx rx = new Rx(p);
            for (ByteBuf piece : pieces) {
                rx.ch.writeInbound(piece);
            }
            assertEquals(List.of("read", error.id()), rx.app.order);
            IftException e = rx.app.onlyException();
            assertInstanceOf(IftFramingException.class, e);
            assertEquals(error, e.error());
            assertEquals(2, e.terminateLayer());
            assertEquals(0, e.terminateErrorType());
            assertEquals(terminateCode, e.terminateErrorCode());
            assertTrue(e.streamCanCarryTerminate());
            assertTrue(rx.ch.isOpen(), "IFT leaves the close to RDMAP, after its Terminate");
            assertFalse(rx.ch.finishAndReleaseAll());
        });
    }

    /** The good frame as the receiver configured by {@code p} expects it. */
    static byte[] F2Of(IftParameters p) {
        return new RefFrame().crcs(p.rxHeaderCrcPresent(), p.rxPayloadCrcPresent()).build(SEND_HEADER, HELLO);
    }

    static IftParameters both() {
        return nodeB(true, true, true, true, IftSettings.defaults());
    }

    @Test
    void flippedHeaderCrcBitIsF2() {
        byte[] bad = F2.clone();
        bad[24] ^= 0x01;
        assertRejectedEverySplit(bad, IftError.HEADER_CRC, 0x02, both());
    }

    @Test
    void corruptedDdpHeaderOctetIsF2BeforeThePayloadArrives() {
        byte[] bad = F2.clone();
        bad[10] ^= 0x40; // inside the DDP header
        Rx rx = new Rx();
        rx.ch.writeInbound(Unpooled.wrappedBuffer(bad, 0, 28)); // prefix, header, header CRC; no payload yet
        assertEquals(IftError.HEADER_CRC, rx.app.onlyException().error());
        assertFalse(rx.ch.finishAndReleaseAll());
    }

    @Test
    void flippedPayloadBitIsF4() {
        byte[] bad = F3.clone();
        bad[30] ^= 0x10;
        assertRejectedEverySplit(bad, IftError.PAYLOAD_CRC, 0x02, both());
    }

    @Test
    void wrongVTagWithAMatchingHeaderCrcIsF3() {
        RefFrame r = new RefFrame();
        r.vTag = 0xC3D5;
        assertRejectedEverySplit(r.build(SEND_HEADER, HELLO), IftError.VTAG_MISMATCH, 0x03, both());
    }

    @Test
    void wrongVTagWithoutHeaderCrcIsF3() {
        RefFrame r = new RefFrame().crcs(false, false);
        r.vTag = 0x0000;
        assertRejectedEverySplit(r.build(SEND_HEADER, HELLO), IftError.VTAG_MISMATCH, 0x03,
                nodeB(false, false, true, true, IftSettings.defaults()));
    }

    @Test
    void alteredVTagUnderTheOriginalHeaderCrcIsCaughtByTheCrcFirst() {
        byte[] bad = F2.clone();
        bad[5] ^= 0x01; // VTag 0xC3D5, CRC still over 0xC3D4
        assertRejectedEverySplit(bad, IftError.HEADER_CRC, 0x02, both());
    }

    @ParameterizedTest(name = "header_size {0} over a {1} header")
    @CsvSource({"14, untagged", "18, tagged", "17, untagged", "22, tagged"})
    void headerSizeThatDisagreesWithTheDdpHeaderIsF5(int headerSize, String type) {
        byte[] base = type.equals("tagged") ? TAGGED_WRITE_HEADER : SEND_HEADER;
        byte[] header = Arrays.copyOf(base, headerSize); // the field says what the octets are
        assertRejectedEverySplit(new RefFrame().build(header, HELLO), IftError.HEADER_SIZE, 0x03, both());
    }

    @Test
    void headerSizeZeroOrAboveTheMaximumIsF1() {
        RefFrame zero = new RefFrame().crcs(false, false);
        IftParameters noCrc = nodeB(false, false, true, true, IftSettings.defaults());
        assertRejectedEverySplit(zero.build(new byte[0], HELLO), IftError.SIZE_LIMIT, 0x03, noCrc);
        byte[] header = Arrays.copyOf(SEND_HEADER, 65); // default maximum 64
        assertRejectedEverySplit(new RefFrame().build(header, HELLO), IftError.SIZE_LIMIT, 0x03, both());
    }

    @Test
    void payloadSizeBeyondTheMaximumIsF1AsSoonAsTheSixOctetPrefixIsIn() {
        IftParameters p = nodeB(true, true, true, true, IftSettings.builder().maxPayloadSize(1024).build());
        byte[] frame = new RefFrame().build(SEND_HEADER, new byte[1025]);
        Rx rx = new Rx(p);
        rx.ch.writeInbound(Unpooled.wrappedBuffer(frame, 0, 5));
        assertTrue(rx.app.exceptions.isEmpty());
        rx.ch.writeInbound(Unpooled.wrappedBuffer(frame, 5, 1));
        IftException e = rx.app.onlyException();
        assertEquals(IftError.SIZE_LIMIT, e.error());
        assertTrue(e.getMessage().contains("payload_size 1025 exceeds the maximum of 1024"), e.getMessage());
        rx.ch.writeInbound(Unpooled.wrappedBuffer(frame, 6, frame.length - 6));
        assertTrue(rx.app.received.isEmpty());
        assertFalse(rx.ch.finishAndReleaseAll());
        assertRejectedEverySplit(new RefFrame().build(SEND_HEADER, new byte[1025]), IftError.SIZE_LIMIT, 0x03, p);
        // exactly the maximum is accepted
        Rx ok = new Rx(p);
        ok.ch.writeInbound(Unpooled.wrappedBuffer(new RefFrame().build(SEND_HEADER, new byte[1024])));
        assertEquals(1, ok.app.received.size());
        assertFalse(ok.ch.finishAndReleaseAll());
    }

    @Test
    void crcsAnnouncedAsIgnoredAreConsumedButNeverChecked() {
        byte[] bad = F2.clone();
        bad[24] ^= 0x01; // header CRC
        bad[36] ^= 0x01; // payload CRC
        Rx rx = new Rx(nodeB(true, true, false, false, IftSettings.defaults()));
        rx.ch.writeInbound(Unpooled.wrappedBuffer(concat(bad, F2)));
        assertEquals(List.of("read", "read"), rx.app.order);
        assertArrayEquals(concat(SEND_HEADER, HELLO), rx.app.received.get(0));
        assertFalse(rx.ch.finishAndReleaseAll());
    }

    @Test
    void bigEndianOrVTagLessHeaderCrcIsF2AndNamedInTheMessage() {
        byte[] be = F2.clone();
        be[24] = (byte) 0xdd; // DD3E75A5 written most-significant octet first
        be[25] = 0x3e;
        be[26] = 0x75;
        be[27] = (byte) 0xa5;
        Rx rx = new Rx();
        rx.ch.writeInbound(Unpooled.wrappedBuffer(be));
        IftException e = rx.app.onlyException();
        assertEquals(IftError.HEADER_CRC, e.error());
        assertTrue(e.getMessage().contains("most-significant octet first"), e.getMessage());

        byte[] noVTag = F2.clone();
        int alt = IftVectors.F2_HEADER_CRC_WITHOUT_VTAG;
        for (int i = 0; i < 4; i++) {
            noVTag[24 + i] = (byte) (alt >>> (8 * i));
        }
        Rx rx2 = new Rx();
        rx2.ch.writeInbound(Unpooled.wrappedBuffer(noVTag));
        assertTrue(rx2.app.onlyException().getMessage().contains("leaves the VTag out"),
                rx2.app.onlyException().getMessage());
        assertFalse(rx.ch.finishAndReleaseAll() || rx2.ch.finishAndReleaseAll());
    }

    @Test
    void garbageIsNeverDelivered() {
        byte[] garbage = "GET / HTTP/1.1\r\nHost: example\r\n\r\n".getBytes();
        Rx rx = new Rx();
        rx.ch.writeInbound(Unpooled.wrappedBuffer(garbage));
        // 0x4745 = 18245 octets of header: beyond the maximum
        assertEquals(IftError.SIZE_LIMIT, rx.app.onlyException().error());
        assertTrue(rx.app.received.isEmpty());
        assertFalse(rx.ch.finishAndReleaseAll());
    }

    @Test
    void outboundStillWorksAfterAnInboundErrorSoRdmapCanSendItsTerminate() {
        EmbeddedChannel ch = new EmbeddedChannel(new IftFramer(nodeA(true, true)), new Recorder());
        byte[] bad = new RefFrame().build(SEND_HEADER, HELLO); // carries 0xC3D4, node A expects 0x1A2B
        ch.writeInbound(Unpooled.wrappedBuffer(bad));
        ch.writeOutbound(buf(concat(SEND_HEADER, HELLO)));
        assertArrayEquals(F2, drainOutbound(ch));
        assertFalse(ch.finishAndReleaseAll());
    }

    // ------------------------------------------------------------ F6: FIN or RST inside a frame

    @Test
    void finInsideAFrameIsF6AfterTheFramesBeforeItAndBeforeInactive() {
        byte[] stream = concat(F2, F3);
        for (int cut = F2.length + 1; cut < stream.length; cut++) {
            Rx rx = new Rx();
            rx.ch.writeInbound(Unpooled.wrappedBuffer(stream, 0, cut));
            rx.ch.close();
            assertEquals(List.of("read", "F6", "inactive"), rx.app.order, "cut at " + cut);
            IftException e = rx.app.onlyException();
            assertEquals(IftError.CONNECTION_LOST, e.error());
            assertEquals(0x01, e.terminateErrorCode());
            assertFalse(e.streamCanCarryTerminate());
            assertFalse(rx.ch.finishAndReleaseAll());
        }
    }

    @Test
    void finInsideAFrameThatArrivedInOneReadWithAFullFrame() {
        // the complete frame is still in ByteToMessageDecoder's output list when the FIN is seen
        Rx rx = new Rx();
        rx.ch.pipeline().fireChannelRead(Unpooled.wrappedBuffer(concat(F2, Arrays.copyOf(F3, 10))));
        rx.ch.pipeline().fireChannelInactive();
        assertEquals(List.of("read", "F6", "inactive"), rx.app.order);
        assertFalse(rx.ch.finishAndReleaseAll());
    }

    @Test
    void finOnAFrameBoundaryIsACleanEnd() {
        Rx rx = new Rx();
        rx.ch.writeInbound(Unpooled.wrappedBuffer(concat(F2, F3)));
        rx.ch.close();
        assertEquals(List.of("read", "read", "inactive"), rx.app.order);
        assertFalse(rx.ch.finishAndReleaseAll());
    }

    @Test
    void halfClosureInsideAFrameIsF6Once() {
        Rx rx = new Rx();
        rx.ch.writeInbound(Unpooled.wrappedBuffer(F2, 0, 7));
        rx.ch.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
        rx.ch.close();
        assertEquals(List.of("F6", "inactive"), rx.app.order);
        assertFalse(rx.ch.finishAndReleaseAll());
    }

    @Test
    void resetDuringFramingIsF6WithTheIoErrorAsCause() {
        Rx rx = new Rx();
        rx.ch.writeInbound(Unpooled.wrappedBuffer(F2));
        IOException reset = new IOException("Connection reset by peer");
        rx.ch.pipeline().fireExceptionCaught(reset);
        IftException e = rx.app.onlyException();
        assertEquals(IftError.CONNECTION_LOST, e.error());
        assertSame(reset, e.getCause());
        assertFalse(e.streamCanCarryTerminate());
        assertFalse(rx.ch.finishAndReleaseAll());
    }

    @Test
    void f5VectorAgainstAReceiverExpectingCrcsIsNotDeliveredAsData() {
        // a peer that omits CRCs it announced: the octets are misread, and never delivered as a ULPDU
        Rx rx = new Rx();
        rx.ch.writeInbound(Unpooled.wrappedBuffer(concat(F5, F5)));
        assertTrue(rx.app.received.isEmpty());
        assertEquals(IftError.HEADER_CRC, rx.app.onlyException().error());
        assertFalse(rx.ch.finishAndReleaseAll());
    }
}
