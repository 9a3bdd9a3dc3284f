package dev.iwarp.bootstrap;

import dev.iwarp.mpa.MpaFramer;
import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.mpa.MpaStartupHandler;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What an established MPA connection keeps for its lifetime: the negotiated values (and the peer's private
 * data once), not the startup handler nor the Request and Reply frames.
 */
class MpaConnectionAtRestTest {

    @Test
    void establishedConnectionHoldsNoStartupFrames() {
        MpaSettings initiator = MpaSettings.builder().revision(2).ird(2).ord(3)
                .privateData("hello".getBytes(StandardCharsets.US_ASCII)).build();
        MpaSettings responder = MpaSettings.builder().revision(2).ird(4).ord(1).build();
        MpaEnginePair pair = new MpaEnginePair(initiator, responder);
        try {
            for (MpaEnginePair.Side side : new MpaEnginePair.Side[] {pair.initiator, pair.responder}) {
                assertNull(side.ch.pipeline().get(MpaStartupHandler.class), "the startup handler removed itself");
                assertNotNull(side.ch.pipeline().get(MpaFramer.class), "the framer took over");
                MpaParameters kept = side.qp.connectionParameters().framing(MpaParameters.class);
                assertFalse(kept.hasStartupFrames(), "the connection keeps no startup frames");
                assertThrows(IllegalStateException.class, kept::request);
                assertEquals(2, kept.revision());
                assertEquals(side.qp.connectionParameters().ird(), kept.ird());
            }
            MpaParameters i = pair.initiator.qp.connectionParameters().framing(MpaParameters.class);
            MpaParameters r = pair.responder.qp.connectionParameters().framing(MpaParameters.class);
            assertTrue(i.enhanced() && r.enhanced(), "RFC 6581 words exchanged");
            assertEquals(2, r.peerIrd(), "the Request's IRD, as the Initiator sent it");
            assertEquals(3, r.peerOrd(), "the Request's ORD, as the Initiator sent it");
            assertTrue(i.peerIrd() >= 0 && i.peerOrd() >= 0, "the Reply's words still answer");
            assertArrayEquals("hello".getBytes(StandardCharsets.US_ASCII),
                    pair.responder.qp.connectionParameters().peerPrivateData(), "the peer's private data, kept once");
            assertEquals("MPA Rev 2", pair.responder.qp.connectionParameters().framingName());
            assertSame(pair.initiator.qp.connectionParameters().framingName(),
                    pair.responder.qp.connectionParameters().framingName(), "one name for every connection");
        } finally {
            pair.close();
        }
    }
}
