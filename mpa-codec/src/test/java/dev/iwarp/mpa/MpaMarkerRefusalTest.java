package dev.iwarp.mpa;

import dev.iwarp.testkit.ChannelOctets;
import dev.iwarp.testkit.Hex;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import static dev.iwarp.mpa.MpaStartupFrameTest.REP_KEY;
import static dev.iwarp.mpa.MpaStartupFrameTest.REQ_KEY;
import static dev.iwarp.testkit.ChannelOctets.drainOutbound;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Request with M=1 asks us to mark every FPDU we send, which costs us far more than it costs the peer. By default
 * the Responder refuses it as siw does (siw_cm.c): the Request's header back with the Reply key,
 * R=1, M=0, C and Rev echoed, zero IRD/ORD words when enhanced, no ULP data; then the connection closes.
 */
class MpaMarkerRefusalTest {
    private static final class Side {
        final MpaStartupHandler mpa;
        final MpaPair.Recorder app = new MpaPair.Recorder(MpaConnectRequest::accept);
        final EmbeddedChannel ch;

        Side(MpaSettings s) {
            mpa = MpaStartupHandler.responder(s);
            ch = new EmbeddedChannel(mpa, app);
        }
    }

    private static void refused(String request, String reply) {
        Side r = new Side(MpaSettings.builder().crc(false).build());
        r.ch.writeInbound(Unpooled.wrappedBuffer(Hex.parse(REQ_KEY + request)));
        assertArrayEquals(Hex.parse(REP_KEY + reply), drainOutbound(r.ch));
        assertNull(r.app.connectRequest, "the ULP never sees the Request");
        MpaException e = assertInstanceOf(MpaException.class, r.app.completion.cause());
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME, e.errorCode());
        assertTrue(e.getMessage().contains("markers"), e.getMessage());
        r.ch.runPendingTasks();
        assertFalse(r.ch.isOpen(), "closed once the Reply was written");
        r.ch.finishAndReleaseAll();
    }

    @Test
    void rev2EnhancedRequestWithMarkersIsRefused() {
        refused(" 90 02 00 04 00 01 00 01", " 30 02 00 04 00 00 00 00");
    }

    @Test
    void rev2RequestWithMarkersAndCrcIsRefusedWithCEchoed() {
        refused(" D0 02 00 04 00 10 00 10", " 70 02 00 04 00 00 00 00");
    }

    @Test
    void rev1RequestWithMarkersIsRefused() {
        refused(" 80 01 00 00", " 20 01 00 00");
    }

    @Test
    void markersAreServedWhenAccepted() {
        Side r = new Side(MpaSettings.builder().crc(false).acceptMarkers(true).build());
        r.ch.writeInbound(Unpooled.wrappedBuffer(Hex.parse(REQ_KEY + " 90 02 00 04 00 01 00 01")));
        assertArrayEquals(Hex.parse(REP_KEY + " 10 02 00 04 00 01 00 01"), drainOutbound(r.ch));
        assertTrue(r.app.completion.isSuccess());
        assertTrue(r.app.completion.parameters().markersTx(), "we put markers in what we send");
        assertTrue(r.ch.isOpen());
        r.ch.finishAndReleaseAll();
    }
}
