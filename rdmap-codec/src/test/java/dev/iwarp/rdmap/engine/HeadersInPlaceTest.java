package dev.iwarp.rdmap.engine;

import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The engine receives every ULPDU through the lower layer's receiver (header first, then placement; no
 * segment object per incoming segment), whatever inbound handler sits above the lower layer: with or
 * without one, the same octets are placed, that handler sees no ULPDU, and a Terminate quotes the same header.
 */
class HeadersInPlaceTest extends EnginePairTest {
    @ParameterizedTest(name = "inbound handler between codec and engine: {0}")
    @ValueSource(booleans = {false, true})
    void writesReadsAndSendsArePlacedOnEitherPath(boolean inboundBetween) {
        pair = new EnginePair(inboundBetween);
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        writeReadAndSendOfFourSegmentsEach();
        assertTrue(a.headersReadInPlace(), "every ULPDU went to the engine's receiver, none up the pipeline");
        assertTrue(b.headersReadInPlace(), "every ULPDU went to the engine's receiver, none up the pipeline");
    }

    /** RFC 5040 §7.1 (RFC 5040 §4.7): the Terminate quotes the offending segment's whole DDP header. */
    @ParameterizedTest(name = "inbound handler between codec and engine: {0}")
    @ValueSource(booleans = {false, true})
    void aWriteToAnUnknownStagIsTerminatedQuotingItsHeaderOnEitherPath(boolean inboundBetween) {
        pair = new EnginePair(inboundBetween);
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        ByteBuf target = regions.guarded(b, 256);
        MemoryRegion mr = b.register(target, Access.REMOTE_WRITE);
        MemoryRegion src = a.register(a.buffer(100, 0x77), Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.rdmaWrite(1, src.all(), mr.stag() ^ 0x100, mr.iova() + 8));
        pair.pump();

        EngineSide.Recorded write = null;
        for (EngineSide.Recorded r : a.written) {
            if (r.tagged && r.opcode() == 0) {
                write = r;
            }
        }
        assertNotNull(write, "the initiator sent its Write");
        TerminateMessage t = RdmaEngineErrorsTest.terminateSentBy(b);
        assertEquals(new TerminateCause(1, 1, 0x00), t.cause(), t.describe()); // DDP tagged: invalid STag
        assertArrayEquals(write.header, t.terminatedDdpHeader(), "control, RsvdULP, STag and TO as sent");
        regions.assertUntouched(target);
        assertEquals(QpState.ERROR, b.qp.state());
    }

    /** RFC 5041 §7.2: a Send with no receive posted is terminated quoting its untagged DDP header. */
    @ParameterizedTest(name = "inbound handler between codec and engine: {0}")
    @ValueSource(booleans = {false, true})
    void aSendWithNoReceivePostedIsTerminatedQuotingItsHeaderOnEitherPath(boolean inboundBetween) {
        pair = new EnginePair(inboundBetween);
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion src = a.register(a.buffer(100, 0x55), Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.send(1, src.all()));
        pair.pump();

        EngineSide.Recorded send = null;
        for (EngineSide.Recorded r : a.written) {
            if (!r.tagged && r.opcode() == 3) {
                send = r;
            }
        }
        assertNotNull(send, "the initiator sent its Send");
        TerminateMessage t = RdmaEngineErrorsTest.terminateSentBy(b);
        assertEquals(new TerminateCause(1, 2, 0x02), t.cause(), t.describe()); // DDP untagged: no buffer
        assertArrayEquals(send.header, t.terminatedDdpHeader(), "control, RsvdULP, QN, MSN and MO as sent");
        assertEquals(QpState.ERROR, b.qp.state());
    }
}
