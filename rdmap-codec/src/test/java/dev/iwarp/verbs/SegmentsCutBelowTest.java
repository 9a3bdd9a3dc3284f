package dev.iwarp.verbs;

import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

import static dev.iwarp.verbs.RdmaEngineOperationsTest.next;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Over a lower layer that cuts outbound segments itself ({@code LowerLayer.takesMessagesFrom}, issue 13) the
 * engine writes each DDP message once per segment; should a message come back uncut, the stream closes
 * rather than go on out of order.
 */
class SegmentsCutBelowTest extends EnginePairTest {
    @Test
    void everyOperationCrossesALowerLayerThatCutsSegments() {
        pair = EnginePair.cuttingSegmentsBelow();
        writeReadAndSendOfFourSegmentsEach();
    }

    @Test
    void aMessageHeldUncutClosesTheStreamAndFailsItsRequest() {
        pair = EnginePair.cuttingSegmentsBelow();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        int size = 3 * a.qp.connectionParameters().mulpdu();
        MemoryRegion src = a.register(a.buffer(size, 0x11), Access.LOCAL_WRITE);
        ByteBuf dst = regions.guarded(b, size);
        MemoryRegion dstMr = b.register(dst, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        a.llp.holdsMessages = true; // as a handler put between engine and lower layer after startup would
        a.qp.postSend(SendRequest.rdmaWrite(1, src.all(), dstMr.stag(), dstMr.iova()));
        pair.pump();
        assertEquals(1, a.llp.heldMessages.size(), "the first segment's write was held");
        assertFalse(a.ch.isOpen(), "the stream closed");
        Completion c = next(a.sendCq);
        assertEquals(WcStatus.WR_FLUSH_ERR, c.status(), c::toString);
        assertEquals(1, c.wrId());
        regions.assertUntouched(dst);
    }
}
