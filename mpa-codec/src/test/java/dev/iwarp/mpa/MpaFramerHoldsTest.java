package dev.iwarp.mpa;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The framer says whether it still holds octets of an unfinished FPDU after a read, also behind a complete one. */
class MpaFramerHoldsTest {
    /** ULPDU_Length 14, 14 octets, no pad, CRC field (CRC off): 20 octets. */
    private static byte[] fpdu() {
        byte[] f = new byte[20];
        f[1] = 14;
        return f;
    }

    @Test
    void aPartialFpduBehindACompleteOneIsReported() {
        MpaFramer framer = new MpaFramer(false, false, false, 0xFFFF, 1024, false);
        EmbeddedChannel ch = new EmbeddedChannel(framer);
        byte[] both = new byte[22];
        System.arraycopy(fpdu(), 0, both, 0, 20);
        both[21] = 14; // the next FPDU's ULPDU_Length, nothing more
        ch.writeInbound(Unpooled.wrappedBuffer(both));
        assertEquals(1, ch.inboundMessages().size(), "the complete FPDU passed up");
        assertTrue(framer.holdsIncompleteFpdu(), "2 octets of the next one are held");
        byte[] rest = new byte[18];
        ch.writeInbound(Unpooled.wrappedBuffer(rest));
        assertFalse(framer.holdsIncompleteFpdu(), "the second FPDU completed");
        assertEquals(2, ch.inboundMessages().size());
        ch.finishAndReleaseAll();
    }

    @Test
    void oneOctetOfAHeaderIsHeld() {
        MpaFramer framer = new MpaFramer(false, false, false, 0xFFFF, 1024, false);
        EmbeddedChannel ch = new EmbeddedChannel(framer);
        assertFalse(framer.holdsIncompleteFpdu());
        ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {0}));
        assertTrue(framer.holdsIncompleteFpdu());
        ch.finishAndReleaseAll();
    }
}
