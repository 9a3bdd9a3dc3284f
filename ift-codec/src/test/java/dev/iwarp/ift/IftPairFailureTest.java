package dev.iwarp.ift;

import dev.iwarp.ift.IftTestUtil.Recorder;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import static dev.iwarp.ift.IftVectors.HELLO;
import static dev.iwarp.ift.IftVectors.SEND_HEADER;
import static dev.iwarp.ift.IftVectors.concat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Broken and hostile peers on the in-memory pair: node A's phase 0 damaged on the way (bad magic, bad
 * indication CRC, garbage instead, truncated then silence), the A/A and B/B mis-starts, and a frame
 * with a VTag that is not the receiver's. Each ends in the outcome the digest names, on both sides.
 */
class IftPairFailureTest {

    static IftError error(Recorder app) {
        assertNotNull(app.completion, "completion event");
        assertFalse(app.completion.isSuccess(), "failed");
        return ((IftException) app.completion.cause()).error();
    }

    /** Rewrites the octets of A's phase 0 (the first 64 octets A sends) with {@code f}. */
    static UnaryOperator<byte[]> onPhase0(UnaryOperator<byte[]> f) {
        AtomicInteger seen = new AtomicInteger();
        return octets -> seen.getAndAdd(octets.length) == 0 ? f.apply(octets) : octets;
    }

    static IftPair pair() {
        return new IftPair(IftSettings.defaults(), IftSettings.defaults());
    }

    @Test
    void badMagicIsA1AtNodeBWhichClosesWithoutAnsweringNodeASeesTheFin() {
        IftPair p = pair();
        p.tamperAToB = onPhase0(o -> {
            o[0] = 'X';
            return o;
        });
        p.pump();
        assertEquals(IftError.NOT_AN_IFT_PEER, error(p.bApp));
        assertEquals(0, p.bToA.size(), "a malformed phase 0 is not answered");
        assertEquals(IftError.ADAPTION_CONNECTION_LOST, error(p.aApp));
        assertFalse(p.a.isOpen() || p.b.isOpen());
        p.finish();
    }

    @Test
    void badIndicationCrcIsA2() {
        IftPair p = pair();
        p.tamperAToB = onPhase0(o -> {
            o[20] ^= 0x04; // a reserved octet: CRC-covered, so the CRC no longer matches
            return o;
        });
        p.pump();
        assertEquals(IftError.INDICATION_CRC, error(p.bApp));
        assertEquals(0, p.bToA.size());
        assertEquals(IftError.ADAPTION_CONNECTION_LOST, error(p.aApp));
        p.finish();
    }

    @Test
    void garbageInsteadOfPhase0IsA1() {
        IftPair p = pair();
        p.tamperAToB = onPhase0(o -> "SSH-2.0-OpenSSH_9.6\r\n".getBytes());
        p.pump();
        assertEquals(IftError.NOT_AN_IFT_PEER, error(p.bApp));
        assertEquals(IftError.ADAPTION_CONNECTION_LOST, error(p.aApp));
        p.finish();
    }

    @Test
    void truncatedPhase0ThenSilenceTimesOutOnBothSides() {
        IftPair p = new IftPair(IftSettings.defaults(), IftSettings.defaults());
        p.tamperAToB = onPhase0(o -> Arrays.copyOf(o, 40));
        p.pump();
        assertTrue(p.aApp.completion == null && p.bApp.completion == null, "both wait");
        p.advance(9_999);
        assertTrue(p.aApp.completion == null && p.bApp.completion == null, "not before 10 s");
        p.advance(1);
        assertEquals(IftError.ADAPTION_TIMEOUT, error(p.aApp));
        assertEquals(IftError.ADAPTION_TIMEOUT, error(p.bApp));
        assertTrue(p.bApp.completion.cause().getMessage().contains("40 of 64"), p.bApp.completion.cause().getMessage());
        assertFalse(p.a.isOpen() || p.b.isOpen());
        p.finish();
    }

    @Test
    void twoNodeAsBothSeePhase0AndClose() {
        IftPair p = new IftPair(IftAdaptionHandler.nodeA(IftSettings.defaults()),
                IftAdaptionHandler.nodeA(IftSettings.defaults())).pump();
        assertEquals(IftError.WRONG_PHASE, error(p.aApp));
        assertEquals(IftError.WRONG_PHASE, error(p.bApp));
        assertEquals(64, p.aToB.size());
        assertEquals(64, p.bToA.size());
        assertFalse(p.a.isOpen() || p.b.isOpen());
        p.finish();
    }

    @Test
    void twoNodeBsWaitForEachOtherUntilTheTimeout() {
        IftSettings s = IftSettings.builder().adaptionTimeout(3, java.util.concurrent.TimeUnit.SECONDS).build();
        IftPair p = new IftPair(IftAdaptionHandler.nodeB(s), IftAdaptionHandler.nodeB(s)).pump();
        assertEquals(0, p.aToB.size() + p.bToA.size(), "nobody speaks first");
        p.advance(3_000);
        assertEquals(IftError.ADAPTION_TIMEOUT, error(p.aApp));
        assertEquals(IftError.ADAPTION_TIMEOUT, error(p.bApp));
        assertFalse(p.a.isOpen() || p.b.isOpen());
        p.finish();
    }

    @Test
    void frameWithAStaleVTagIsF3AtTheReceiverOnly() {
        // without a header CRC the VTag is the only framing check (IFT draft §4.2)
        IftSettings noCrc = IftSettings.builder().sendCrcs(false, false).build();
        IftPair p = new IftPair(noCrc, noCrc).pump();
        IftParameters b = p.bApp.completion.parameters();
        AtomicInteger seen = new AtomicInteger();
        p.tamperAToB = o -> {
            if (seen.getAndAdd(o.length) == 0) {
                int stale = b.localVTag() ^ 0x0101;
                o[4] = (byte) (stale >>> 8);
                o[5] = (byte) stale;
            }
            return o;
        };
        p.a.writeAndFlush(Unpooled.wrappedBuffer(concat(SEND_HEADER, HELLO)));
        p.b.writeAndFlush(Unpooled.wrappedBuffer(concat(SEND_HEADER, HELLO)));
        p.pump();
        IftException e = p.bApp.onlyException();
        assertEquals(IftError.VTAG_MISMATCH, e.error());
        assertTrue(e.streamCanCarryTerminate());
        assertEquals(0, p.bApp.received.size());
        assertEquals(1, p.aApp.received.size(), "the other direction is unaffected");
        assertTrue(p.a.isOpen() && p.b.isOpen(), "RDMAP sends its Terminate and closes, not IFT");
        p.finish();
    }

    @Test
    void frameCutByAFinIsF6AtTheReceiver() {
        IftPair p = pair().pump();
        p.a.writeAndFlush(Unpooled.wrappedBuffer(concat(SEND_HEADER, HELLO)));
        p.a.writeAndFlush(Unpooled.wrappedBuffer(concat(SEND_HEADER, new byte[100])));
        AtomicInteger seen = new AtomicInteger();
        p.tamperAToB = o -> {
            int before = seen.getAndAdd(o.length);
            int keep = Math.max(0, Math.min(o.length, 37 + 50 - before)); // F2-sized frame, then half of the next
            return Arrays.copyOf(o, keep);
        };
        p.pump();
        p.a.close();
        p.pump();
        assertEquals(1, p.bApp.received.size());
        assertEquals(IftError.CONNECTION_LOST, p.bApp.onlyException().error());
        assertFalse(p.bApp.onlyException().streamCanCarryTerminate());
        p.finish();
    }
}
