package dev.iwarp.ift;

import dev.iwarp.testkit.ChannelOctets;
import dev.iwarp.ift.IftAdaptionHandlerTest.Side;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import static dev.iwarp.ift.IftAdaptionHandlerTest.nodeA;
import static dev.iwarp.ift.IftAdaptionHandlerTest.nodeB;
import static dev.iwarp.testkit.ChannelOctets.drainOutbound;
import static dev.iwarp.ift.IftVectors.AI1;
import static dev.iwarp.ift.IftVectors.AI2;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link IftAdaptionHandler} against peers that never complete the exchange: the A/A mis-start, node
 * B receiving phase 1, garbage, a truncated indication then silence (the timeout, to the
 * millisecond), a FIN or RST mid-indication. Each ends closed, with the error the digest names.
 */
class IftAdaptionHandlerFailureTest {

    @Test
    void nodeAReceivingPhase0IsTheAaMisStart() {
        Side a = nodeA(IftSettings.builder());
        drainOutbound(a.ch);
        a.ch.writeInbound(Unpooled.wrappedBuffer(AI1));
        IftAdaptionException e = a.failure();
        assertEquals(IftError.WRONG_PHASE, e.error());
        assertTrue(e.getMessage().contains("both ends act as node A"), e.getMessage());
        assertEquals(0, drainOutbound(a.ch).length);
        assertFalse(a.ch.isOpen());
        assertFalse(a.ch.finishAndReleaseAll());
    }

    @Test
    void nodeBReceivingPhase1IsAMisStartAndIsNotAnswered() {
        Side b = nodeB(IftSettings.builder());
        b.ch.writeInbound(Unpooled.wrappedBuffer(AI2));
        assertEquals(IftError.WRONG_PHASE, b.failure().error());
        assertEquals(0, drainOutbound(b.ch).length);
        assertFalse(b.ch.isOpen());
        assertFalse(b.ch.finishAndReleaseAll());
    }

    @Test
    void garbageIsA1AtItsFirstOctetWithoutWaitingFor64() {
        Side b = nodeB(IftSettings.builder());
        b.ch.writeInbound(Unpooled.wrappedBuffer("GET / HTTP/1.1\r\n".getBytes()));
        IftAdaptionException e = b.failure();
        assertEquals(IftError.NOT_AN_IFT_PEER, e.error());
        assertEquals(0, drainOutbound(b.ch).length);
        assertFalse(b.ch.isOpen());
        assertFalse(b.ch.finishAndReleaseAll());
    }

    @Test
    void truncatedIndicationThenSilenceTimesOut() {
        Side a = nodeA(IftSettings.builder().adaptionTimeout(10, TimeUnit.SECONDS));
        drainOutbound(a.ch);
        a.ch.writeInbound(Unpooled.wrappedBuffer(AI2, 0, 40));
        a.ch.advanceTimeBy(9999, TimeUnit.MILLISECONDS);
        a.ch.runScheduledPendingTasks();
        assertNull(a.app.completion);
        assertTrue(a.ch.isOpen());
        a.ch.advanceTimeBy(1, TimeUnit.MILLISECONDS);
        a.ch.runScheduledPendingTasks();
        IftAdaptionException e = a.failure();
        assertEquals(IftError.ADAPTION_TIMEOUT, e.error());
        assertTrue(e.getMessage().contains("40 of 64 octets"), e.getMessage());
        assertFalse(a.ch.isOpen());
        assertFalse(a.ch.finishAndReleaseAll());
    }

    @Test
    void finDuringTheAdaptionIsA10() {
        Side b = nodeB(IftSettings.builder());
        b.ch.writeInbound(Unpooled.wrappedBuffer(AI1, 0, 10));
        b.ch.close();
        IftAdaptionException e = b.failure();
        assertEquals(IftError.ADAPTION_CONNECTION_LOST, e.error());
        assertTrue(e.getMessage().contains("10 of 64 octets"), e.getMessage());
        assertFalse(b.ch.finishAndReleaseAll());
    }

    @Test
    void resetDuringTheAdaptionIsA10() {
        Side a = nodeA(IftSettings.builder());
        drainOutbound(a.ch);
        a.ch.pipeline().fireExceptionCaught(new IOException("Connection reset by peer"));
        assertEquals(IftError.ADAPTION_CONNECTION_LOST, a.failure().error());
        assertFalse(a.ch.isOpen());
        assertTrue(a.app.exceptions.isEmpty(), "reported once, as the completion event");
        assertFalse(a.ch.finishAndReleaseAll());
    }
}
