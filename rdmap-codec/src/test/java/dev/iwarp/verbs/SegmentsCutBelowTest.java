package dev.iwarp.verbs;

import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

import static dev.iwarp.verbs.RdmaEngineOperationsTest.next;
import static dev.iwarp.verbs.Regions.bytes;
import static dev.iwarp.verbs.Regions.fillPattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Over a lower layer that cuts outbound segments itself ({@code LowerLayer.takesMessagesFrom}, issue 13) the
 * engine writes each DDP message once per segment; should a message come back uncut, the stream closes
 * rather than go on out of order.
 */
class SegmentsCutBelowTest extends EnginePairTest {
    @Test
    void everyOperationCrossesALowerLayerThatCutsSegments() {
        pair = EnginePair.cuttingSegmentsBelow();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        int size = 3 * a.qp.connectionParameters().mulpdu() + 5; // four segments each way
        ByteBuf src = a.buffer(size, 0);
        fillPattern(src, 5);
        MemoryRegion srcMr = a.register(src, Access.LOCAL_WRITE);
        ByteBuf dst = regions.guarded(b, size);
        MemoryRegion dstMr = b.register(dst, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        a.qp.postSend(SendRequest.rdmaWrite(1, srcMr.all(), dstMr.stag(), dstMr.iova()));
        pair.pump();
        assertTrue(next(a.sendCq).isSuccess());
        assertArrayEquals(bytes(src, 0, size), bytes(dst, 0, size));

        fillPattern(dst, 9);
        ByteBuf sink = regions.guarded(a, size);
        MemoryRegion sinkMr = a.register(sink, Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.rdmaRead(2, sinkMr.all(), dstMr.stag(), dstMr.iova()));
        pair.pump();
        assertTrue(next(a.sendCq).isSuccess());
        assertArrayEquals(bytes(dst, 0, size), bytes(sink, 0, size), "the Read Response was cut below too");

        ByteBuf recv = regions.guarded(b, size);
        b.qp.postRecv(RecvRequest.of(3, b.register(recv, Access.LOCAL_WRITE).all()));
        a.qp.postSend(SendRequest.send(4, srcMr.all()));
        pair.pump();
        assertTrue(next(a.sendCq).isSuccess());
        Completion r = next(b.recvCq);
        assertEquals(size, r.byteLength());
        assertArrayEquals(bytes(src, 0, size), bytes(recv, 0, size));
        regions.assertCanaries(dst);
        regions.assertCanaries(sink);
        regions.assertCanaries(recv);
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
