package dev.iwarp.mpa;

import dev.iwarp.testkit.ChannelOctets;
import dev.iwarp.framing.Crc32c;
import dev.iwarp.testkit.Hex;
import dev.iwarp.testkit.Splits;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static dev.iwarp.mpa.MpaStartupFrameTest.REP_KEY;
import static dev.iwarp.mpa.MpaStartupFrameTest.REQ_KEY;
import static dev.iwarp.testkit.ChannelOctets.drainOutbound;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link MpaStartupHandler} alone, one side driven by hand-written octets: the startup rules of
 * RFC 5044 §7.1.2, RFC 6581 and hostile peers. Each case checks the MPA error code, whether the
 * connection was closed as the spec says, and what was (not) sent.
 */
class MpaStartupHandlerTest {
    static final byte[] SIW_REQUEST = Hex.parse(REQ_KEY + " 10 02 00 04 00 01 00 01");
    static final byte[] SIW_REPLY = Hex.parse(REP_KEY + " 10 02 00 04 00 01 00 01");

    private static final class Side {
        final MpaStartupHandler mpa;
        final MpaPair.Recorder app;
        final EmbeddedChannel ch;

        Side(MpaStartupHandler mpa, java.util.function.Consumer<MpaConnectRequest> decision) {
            this.mpa = mpa;
            this.app = new MpaPair.Recorder(decision);
            this.ch = new EmbeddedChannel(mpa, app);
        }

        /** On a channel whose timers run on {@code clock} alone (it moves only when the test advances it). */
        Side(MpaStartupHandler mpa, java.util.function.Consumer<MpaConnectRequest> decision, MockTicker clock) {
            this.mpa = mpa;
            this.app = new MpaPair.Recorder(decision);
            this.ch = EmbeddedChannel.builder().ticker(clock).handlers(mpa, app).build();
        }

        Throwable failure() {
            assertNotNull(app.completion, "completion event fired");
            assertFalse(app.completion.isSuccess());
            assertTrue(mpa.startupFuture().isDone() && !mpa.startupFuture().isSuccess());
            assertTrue(app.completion.cause() == mpa.startupFuture().cause());
            return app.completion.cause();
        }

        MpaErrorCode errorCode() {
            return assertInstanceOf(MpaException.class, failure()).errorCode();
        }
    }

    static Side responder(MpaSettings s) {
        return new Side(MpaStartupHandler.responder(s), MpaConnectRequest::accept);
    }

    static Side initiator(MpaSettings s) {
        return new Side(MpaStartupHandler.initiator(s), null);
    }

    // ------------------------------------------------------------ Responder

    @Test
    void responderAcceptsSiwRequestSplitAtEveryByteBoundary() {
        Splits.forEachSplit(SIW_REQUEST, pieces -> {
            Side r = responder(MpaSettings.builder().crc(false).build());
            int fed = 0;
            for (ByteBuf piece : pieces) {
                fed += piece.readableBytes();
                r.ch.writeInbound(piece);
                assertEquals(fed == SIW_REQUEST.length, r.app.connectRequest != null, "Request event exactly at its last octet");
            }
            assertNotNull(r.app.connectRequest);
            // siw's Reply to rping echoes IRD/ORD 1 (mpa-rev2 §7): our defaults 16/16 are lowered to the Request's
            assertArrayEquals(SIW_REPLY, drainOutbound(r.ch));
            assertTrue(r.app.completion.isSuccess());
            MpaParameters p = r.app.completion.parameters();
            assertEquals(1, p.ird());
            assertEquals(1, p.ord());
            assertFalse(p.crc());
            assertTrue(r.ch.isOpen());
            r.ch.finishAndReleaseAll();
        });
    }

    @Test
    void responderAnswersCrcWantedWhenConfigured() {
        Side r = responder(MpaSettings.defaults());
        r.ch.writeInbound(Unpooled.wrappedBuffer(SIW_REQUEST));
        // C=1 in our Reply turns CRC on although siw asked for none (siw_cm.c)
        assertArrayEquals(Hex.parse(REP_KEY + " 50 02 00 04 00 01 00 01"), drainOutbound(r.ch));
        assertTrue(r.app.completion.parameters().crc());
        r.ch.finishAndReleaseAll();
    }

    @Test
    void garbageIsError4AndClosesWithoutReply() {
        Side r = responder(MpaSettings.defaults());
        r.ch.writeInbound(Unpooled.wrappedBuffer("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes()));
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, r.errorCode());
        assertFalse(r.ch.isOpen(), "RFC 5044 §7.1.2 rule 2: improperly formatted Request closes TCP");
        assertEquals(0, drainOutbound(r.ch).length);
        assertNull(r.app.connectRequest);
        r.ch.finishAndReleaseAll();
    }

    @Test
    void wrongKeyIsError4() {
        byte[] v = SIW_REQUEST.clone();
        v[15] = 'E';
        Side r = responder(MpaSettings.defaults());
        r.ch.writeInbound(Unpooled.wrappedBuffer(v));
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, r.errorCode());
        assertFalse(r.ch.isOpen());
        r.ch.finishAndReleaseAll();
    }

    @Test
    void rev3IsError4() {
        Side r = responder(MpaSettings.defaults());
        r.ch.writeInbound(Unpooled.wrappedBuffer(Hex.parse(REQ_KEY + " 40 03 00 00")));
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, r.errorCode());
        assertTrue(r.failure().getMessage().contains("Rev 3"));
        assertFalse(r.ch.isOpen());
        assertEquals(0, drainOutbound(r.ch).length);
        r.ch.finishAndReleaseAll();
    }

    @Test
    void rev0RefusedWhenMinRevisionIs1() {
        Side r = responder(MpaSettings.builder().minRevision(1).build());
        r.ch.writeInbound(Unpooled.wrappedBuffer(Hex.parse(REQ_KEY + " C0 00 00 00")));
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, r.errorCode());
        assertFalse(r.ch.isOpen());
        r.ch.finishAndReleaseAll();
    }

    @Test
    void privateDataLength513IsError4WithoutWaitingForThePrivateData() {
        Side r = responder(MpaSettings.defaults());
        r.ch.writeInbound(Unpooled.wrappedBuffer(Hex.parse(REQ_KEY + " 40 01 02 01")));
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, r.errorCode());
        assertFalse(r.ch.isOpen());
        r.ch.finishAndReleaseAll();
    }

    @Test
    void truncatedRequestThenSilenceTimesOutWithError4() {
        // the channel's clock stands still from before the handler schedules its timer: on a frozen clock set
        // after construction, real time that passed in between (a loaded machine) fired the timer at 4999 ms
        MockTicker clock = Ticker.newMockTicker();
        Side r = new Side(MpaStartupHandler.responder(MpaSettings.builder().startupTimeout(5, TimeUnit.SECONDS).build()),
                MpaConnectRequest::accept, clock);
        r.ch.writeInbound(Unpooled.wrappedBuffer(SIW_REQUEST, 0, 13));
        clock.advance(4999, TimeUnit.MILLISECONDS);
        r.ch.runScheduledPendingTasks();
        assertTrue(r.ch.isOpen());
        assertNull(r.app.completion);
        clock.advance(2, TimeUnit.MILLISECONDS);
        r.ch.runScheduledPendingTasks();
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, r.errorCode());
        assertTrue(r.failure().getMessage().contains("13 octets"), r.failure().getMessage());
        assertFalse(r.ch.isOpen(), "RFC 5044 §7.1.2 rule 10");
        r.ch.finishAndReleaseAll();
    }

    @Test
    void requestInOneBytePiecesWithMoreOctetsBehindIt() {
        // octets behind the Request (here: garbage an eager peer sent) reach the framer, not the startup handler
        Side r = responder(MpaSettings.builder().crc(false).build());
        byte[] all = MpaFramerTest.concat(SIW_REQUEST, MpaFramerTest.SIW_SEND, Hex.parse("00 00 00 00"));
        for (byte[] piece : Splits.oneBytePieces(all)) {
            r.ch.writeInbound(Unpooled.wrappedBuffer(piece));
        }
        assertTrue(r.app.completion.isSuccess());
        assertEquals(1, r.app.received.size());
        assertArrayEquals(Arrays.copyOfRange(MpaFramerTest.SIW_SEND, 2, MpaFramerTest.SIW_SEND.length),
                r.app.received.get(0));
        r.ch.finishAndReleaseAll();
    }

    @Test
    void asynchronousAcceptFromAnotherThread() throws Exception {
        Side r = new Side(MpaStartupHandler.responder(MpaSettings.builder().crc(false).build()), null);
        r.ch.writeInbound(Unpooled.wrappedBuffer(SIW_REQUEST));
        assertEquals(0, drainOutbound(r.ch).length, "no Reply before the ULP decides");
        Thread t = new Thread(() -> r.app.connectRequest.accept(new byte[] {7}));
        t.start();
        t.join();
        r.ch.runPendingTasks();
        assertArrayEquals(Hex.parse(REP_KEY + " 10 02 00 05 00 01 00 01 07"), drainOutbound(r.ch));
        assertTrue(r.app.completion.isSuccess());
        r.ch.finishAndReleaseAll();
    }

    @Test
    void rejectSendsR1AndLeavesTcpOpen() {
        Side r = new Side(MpaStartupHandler.responder(MpaSettings.builder().crc(false).build()),
                req -> req.reject("no!".getBytes()));
        r.ch.writeInbound(Unpooled.wrappedBuffer(SIW_REQUEST));
        // R=1, C as configured, IRD/ORD words zero on a reject, then the ULP's private data
        assertArrayEquals(Hex.parse(REP_KEY + " 30 02 00 07 00 00 00 00 6E 6F 21"), drainOutbound(r.ch));
        assertTrue(r.app.completion.isRejected());
        assertTrue(r.ch.isOpen());
        r.ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {1, 2}));
        assertArrayEquals(new byte[] {1, 2}, r.app.received.get(0), "plain octets reach the ULP after MPA exited");
        r.ch.finishAndReleaseAll();
    }

    @Test
    void responderToResponderMisStartIsCaughtByTimeout() {
        // the clock stands still from before the handler arms its timer (a clock frozen after construction let
        // the real time in between count, however long a loaded machine took)
        MockTicker clock = Ticker.newMockTicker();
        Side a = new Side(MpaStartupHandler.responder(MpaSettings.builder().startupTimeout(1, TimeUnit.SECONDS)
                .build()), MpaConnectRequest::accept, clock);
        clock.advance(999, TimeUnit.MILLISECONDS);
        a.ch.runScheduledPendingTasks();
        assertTrue(a.ch.isOpen(), "not before the timeout");
        clock.advance(1, TimeUnit.MILLISECONDS);
        a.ch.runScheduledPendingTasks();
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, a.errorCode());
        assertFalse(a.ch.isOpen());
        a.ch.finishAndReleaseAll();
    }

    // ------------------------------------------------------------ Initiator

    @Test
    void initiatorSendsSiwStyleRequestAndAcceptsSiwReplySplitAtEveryBoundary() {
        MpaSettings s = MpaSettings.builder().crc(false).ird(1).ord(1).build();
        Splits.forEachSplit(SIW_REPLY, pieces -> {
            Side i = initiator(s);
            assertArrayEquals(SIW_REQUEST, drainOutbound(i.ch));
            int fed = 0;
            for (ByteBuf p : pieces) {
                fed += p.readableBytes();
                i.ch.writeInbound(p);
                assertEquals(fed == SIW_REPLY.length, i.app.completion != null);
            }
            assertTrue(i.app.completion.isSuccess());
            assertEquals(2, i.app.completion.parameters().revision());
            i.ch.finishAndReleaseAll();
        });
    }

    @Test
    void initiatorAcceptsFpdusRightBehindTheReply() {
        // siw in client-server mode may send as soon as its ULP posts (siw_cm.c)
        Side i = initiator(MpaSettings.builder().crc(false).build());
        drainOutbound(i.ch);
        i.ch.writeInbound(Unpooled.wrappedBuffer(MpaFramerTest.concat(SIW_REPLY, MpaFramerTest.SIW_SEND,
                Hex.parse("00 00 00 00"))));
        assertTrue(i.app.completion.isSuccess());
        assertEquals(1, i.app.received.size());
        i.ch.finishAndReleaseAll();
    }

    @Test
    void initiatorToInitiatorMisStartIsError4() {
        Side i = initiator(MpaSettings.defaults());
        drainOutbound(i.ch);
        i.ch.writeInbound(Unpooled.wrappedBuffer(SIW_REQUEST));
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, i.errorCode());
        assertTrue(i.failure().getMessage().contains("Initiator/Initiator"));
        assertFalse(i.ch.isOpen());
        i.ch.finishAndReleaseAll();
    }

    @Test
    void replyWithHigherRevIsError4() {
        Side i = initiator(MpaSettings.builder().revision(1).build());
        drainOutbound(i.ch);
        i.ch.writeInbound(Unpooled.wrappedBuffer(SIW_REPLY));
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, i.errorCode());
        assertFalse(i.ch.isOpen());
        i.ch.finishAndReleaseAll();
    }

    @Test
    void rev1ReplyToRev2RequestFailsUnlessFallbackIsOn() {
        byte[] rev1Reply = Hex.parse(REP_KEY + " 00 01 00 00");
        Side strict = initiator(MpaSettings.defaults());
        drainOutbound(strict.ch);
        strict.ch.writeInbound(Unpooled.wrappedBuffer(rev1Reply));
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, strict.errorCode());
        assertFalse(strict.ch.isOpen());
        strict.ch.finishAndReleaseAll();

        Side lenient = initiator(MpaSettings.builder().rev1Fallback(true).build());
        drainOutbound(lenient.ch);
        lenient.ch.writeInbound(Unpooled.wrappedBuffer(rev1Reply));
        assertTrue(lenient.app.completion.isSuccess());
        assertEquals(1, lenient.app.completion.parameters().revision());
        assertFalse(lenient.app.completion.parameters().enhanced());
        lenient.ch.finishAndReleaseAll();
    }

    @Test
    void rev2ReplyWithoutEnhancedFlagIsError4() {
        Side i = initiator(MpaSettings.defaults());
        drainOutbound(i.ch);
        i.ch.writeInbound(Unpooled.wrappedBuffer(Hex.parse(REP_KEY + " 40 02 00 00")));
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, i.errorCode());
        i.ch.finishAndReleaseAll();
    }

    @Test
    void peerClosingAfterRev2RequestReportsRevisionRefusedWhenFallbackIsOn() {
        Side i = initiator(MpaSettings.builder().rev1Fallback(true).build());
        drainOutbound(i.ch);
        i.ch.close();
        assertInstanceOf(MpaRevisionRefusedException.class, i.failure());
        assertEquals(MpaErrorCode.TCP_CONNECTION_LOST, i.errorCode());
        i.ch.finishAndReleaseAll();

        Side plain = initiator(MpaSettings.defaults());
        drainOutbound(plain.ch);
        plain.ch.close();
        assertFalse(plain.failure() instanceof MpaRevisionRefusedException);
        assertEquals(MpaErrorCode.TCP_CONNECTION_LOST, plain.errorCode());
        plain.ch.finishAndReleaseAll();
    }

    @Test
    void peerRejectLeavesTcpOpenAndCarriesThePrivateData() {
        Side i = initiator(MpaSettings.defaults());
        drainOutbound(i.ch);
        i.ch.writeInbound(Unpooled.wrappedBuffer(Hex.parse(REP_KEY + " 70 02 00 07 00 00 00 00 6E 6F 21")));
        MpaRejectedException e = assertInstanceOf(MpaRejectedException.class, i.failure());
        assertArrayEquals("no!".getBytes(), e.reply().ulpPrivateData());
        assertTrue(i.ch.isOpen());
        i.ch.finishAndReleaseAll();
    }

    @Test
    void unofferedRtrChoiceIsError7WithTerminateThenClose() {
        MpaTerminateFactory terminate = (ByteBufAllocator alloc, MpaErrorCode code) ->
                alloc.buffer().writeBytes(Hex.parse("41 47 00 00 00 00 00 00 00 02 00 00 00 01 00 00 00 00"))
                        .writeByte(0x20).writeByte(code.code()).writeShort(0);
        Side i = initiator(MpaSettings.builder().crc(true).peerToPeer(true).rtrTypes(RtrType.WRITE)
                .terminateFactory(terminate).build());
        byte[] req = drainOutbound(i.ch);
        assertArrayEquals(Hex.parse(REQ_KEY + " 50 02 00 04 80 10 80 10"), req, "A=1, C=1 offered, IRD/ORD 16");
        // Reply picks Read, which was not offered
        i.ch.writeInbound(Unpooled.wrappedBuffer(Hex.parse(REP_KEY + " 50 02 00 04 80 10 40 10")));
        assertEquals(MpaErrorCode.NO_MATCHING_RTR, i.errorCode());
        byte[] sent = drainOutbound(i.ch);
        // the Terminate goes out as an FPDU with CRC (RFC 6581 §6), ULPDU_Length 22
        assertEquals(0x00, sent[0]);
        assertEquals(0x16, sent[1]);
        assertEquals(0x07, sent[21]);
        assertEquals(Crc32c.RESIDUE, Crc32c.compute(Unpooled.wrappedBuffer(sent), 0, sent.length));
        assertFalse(i.ch.isOpen());
        i.ch.finishAndReleaseAll();
    }

    @Test
    void responderOrdAboveMaxIrdIsError6() {
        Side i = initiator(MpaSettings.builder().ird(4).maxIrd(8).build());
        drainOutbound(i.ch);
        i.ch.writeInbound(Unpooled.wrappedBuffer(Hex.parse(REP_KEY + " 50 02 00 04 00 04 00 09")));
        assertEquals(MpaErrorCode.INSUFFICIENT_IRD, i.errorCode());
        assertFalse(i.ch.isOpen());
        i.ch.finishAndReleaseAll();

        Side raised = initiator(MpaSettings.builder().ird(4).maxIrd(8).build());
        drainOutbound(raised.ch);
        raised.ch.writeInbound(Unpooled.wrappedBuffer(Hex.parse(REP_KEY + " 50 02 00 04 00 04 00 08")));
        assertEquals(8, raised.app.completion.parameters().ird(), "IRD raised to the Responder's ORD");
        assertEquals(4, raised.app.completion.parameters().ord(), "ORD lowered to the Responder's IRD");
        raised.ch.finishAndReleaseAll();
    }

    @Test
    void writesBeforeStartupAreHeldThenFramed() {
        Side i = initiator(MpaSettings.builder().crc(true).build());
        drainOutbound(i.ch);
        ChannelFuture early = i.ch.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {0x41, 0x43}));
        assertFalse(early.isDone());
        assertEquals(0, drainOutbound(i.ch).length);
        i.ch.writeInbound(Unpooled.wrappedBuffer(Hex.parse(REP_KEY + " 50 02 00 04 00 10 00 10")));
        assertTrue(early.isSuccess());
        byte[] sent = drainOutbound(i.ch);
        assertArrayEquals(Hex.parse("00 02 41 43"), Arrays.copyOf(sent, 4));
        assertEquals(8, sent.length);
        i.ch.finishAndReleaseAll();
    }

    @Test
    void writesBeforeAFailedStartupFailAndAreReleased() {
        Side i = initiator(MpaSettings.defaults());
        drainOutbound(i.ch);
        ChannelFuture early = i.ch.writeAndFlush(Unpooled.directBuffer().writeBytes(new byte[] {1, 2, 3}));
        i.ch.writeInbound(Unpooled.wrappedBuffer(SIW_REQUEST));
        assertTrue(early.isDone() && !early.isSuccess());
        assertInstanceOf(MpaException.class, early.cause());
        i.ch.finishAndReleaseAll();
    }
}
