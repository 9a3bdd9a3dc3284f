package dev.iwarp.mpa;

import dev.iwarp.testkit.Hex;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a non-MPA layer (the TLS first-record check) asks of the startup format: whether a peer's first
 * octets may be an MPA key, and the R=1 Reply that refuses a Request in its own revision (RFC 5044
 * §7.1.1 and §7.1.5, RFC 6581 §5), byte for byte.
 */
class MpaStartupRefusalTest {
    private static final String REQ_KEY = MpaStartupFrameTest.REQ_KEY;
    private static final String REP_KEY = MpaStartupFrameTest.REP_KEY;
    private static final byte[] NO = "no".getBytes(StandardCharsets.US_ASCII);

    private static void refuses(String requestHex, String replyHex) {
        ByteBuf request = Unpooled.wrappedBuffer(Hex.parse(requestHex));
        ByteBuf reply = Unpooled.buffer();
        try {
            MpaStartupFrame.refusalOf(request, NO).encode(reply);
            assertEquals(0, request.readerIndex(), "reads nothing");
            byte[] got = new byte[reply.readableBytes()];
            reply.readBytes(got);
            assertArrayEquals(Hex.parse(replyHex), got);
        } finally {
            request.release();
            reply.release();
        }
    }

    @Test
    void rev1RequestGetsRev1RejectingReplyWithTheReason() {
        refuses(REQ_KEY + " 40 01 00 00", REP_KEY + " 20 01 00 02 6e 6f");
    }

    @Test
    void enhancedRev2RequestGetsEnhancedReplyWithZeroIrdOrd() {
        refuses(REQ_KEY + " 50 02 00 04 00 01 00 02", REP_KEY + " 30 02 00 06 00 00 00 00 6e 6f");
    }

    @Test
    void plainRev2RequestGetsPlainRev2Reply() {
        refuses(REQ_KEY + " 00 02 00 00", REP_KEY + " 20 02 00 02 6e 6f");
    }

    @Test
    void unknownRevisionIsAnsweredInRev1() {
        refuses(REQ_KEY + " 00 07 00 00", REP_KEY + " 20 01 00 02 6e 6f");
    }

    @Test
    void refusalNeedsAWholeRequestHeader() {
        ByteBuf shortHeader = Unpooled.wrappedBuffer(Hex.parse(REQ_KEY + " 40 01 00"));
        ByteBuf reply = Unpooled.wrappedBuffer(Hex.parse(REP_KEY + " 40 01 00 00"));
        try {
            assertThrows(IllegalArgumentException.class, () -> MpaStartupFrame.refusalOf(shortHeader, NO));
            assertThrows(IllegalArgumentException.class, () -> MpaStartupFrame.refusalOf(reply, NO));
        } finally {
            shortHeader.release();
            reply.release();
        }
    }

    @Test
    void mayBeKeyAcceptsEveryPrefixOfTheKeyAndNothingElse() {
        byte[] req = Hex.parse(REQ_KEY + " 40 01 00 00");
        for (int n = 1; n <= req.length; n++) {
            ByteBuf b = Unpooled.wrappedBuffer(req, 0, n);
            try {
                assertTrue(MpaStartupFrame.mayBeKey(b, MpaStartupFrame.Type.REQUEST), "prefix " + n);
                // the keys differ in their tenth octet only (RFC 5044 §7.1.1)
                assertEquals(n <= 9, MpaStartupFrame.mayBeKey(b, MpaStartupFrame.Type.REPLY), "prefix " + n);
            } finally {
                b.release();
            }
        }
        ByteBuf tls = Unpooled.wrappedBuffer(Hex.parse("16 03 01 02 00"));
        try {
            assertFalse(MpaStartupFrame.mayBeKey(tls, MpaStartupFrame.Type.REQUEST));
            assertFalse(MpaStartupFrame.mayBeKey(tls, MpaStartupFrame.Type.REPLY));
        } finally {
            tls.release();
        }
    }
}
