package dev.iwarp.rdmap.engine;

import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.RdmaDevice;
import dev.iwarp.verbs.SendQueueFullException;
import dev.iwarp.verbs.SendRequest;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The send queue has a depth (libibverbs {@code max_send_wr}): a post beyond it fails at once and queues nothing,
 * also when the requests cannot start (a peer that granted ORD 0 and an application that answers each of its
 * messages with an RDMA Read), and every completion frees its slot.
 */
class SendQueueDepthTest extends EnginePairTest {

    @Test
    void readsThatCannotStartStopAtTheDefaultDepth() {
        pair = new EnginePair(p -> p.ord(0), p -> p.ird(0)); // the peer's MPA Request said IRD 0
        EngineSide a = pair.initiator;
        MemoryRegion local = a.register(a.buffer(64, 0), Access.LOCAL_WRITE);
        for (int i = 0; i < 1024; i++) {
            a.qp.postSend(SendRequest.rdmaRead(i, local.all(), 0x1234, 0));
        }
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> a.qp.postSend(SendRequest.rdmaRead(1024, local.all(), 0x1234, 0)),
                "the 1025th Read that cannot start is refused");
        assertTrue(e instanceof SendQueueFullException, e::toString);
        assertEquals(1024, ((SendQueueFullException) e).depth());
        assertTrue(e.getMessage().contains("1024"), e.getMessage());
        assertEquals(1024, a.engine.stream().sendWrsPosted(), "nothing of the refused post was queued");
    }

    @Test
    void depthIsPerQueuePairAndEveryCompletionFreesItsSlot() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        a.engine.sendQueueDepth(4);
        assertEquals(4, a.qp.sendQueueDepth());
        MemoryRegion local = a.register(a.buffer(64, 0x33), Access.LOCAL_WRITE);
        MemoryRegion remote = b.register(b.buffer(64, 0), Access.REMOTE_WRITE, Access.REMOTE_READ);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 4; i++) {
                SendRequest wr = SendRequest.rdmaRead(i, local.all(), remote.stag(), remote.iova());
                a.qp.postSend(i % 2 == 0 ? wr : wr.unsignaled()); // outstanding until the responses arrive
            }
            SendQueueFullException full = assertThrows(SendQueueFullException.class,
                    () -> a.qp.postSend(SendRequest.rdmaWrite(9, local.all(), remote.stag(), remote.iova())));
            assertEquals(4, full.depth());
            pair.pump();
            assertEquals(0, a.engine.stream().sendWrsPosted(), "signaled or not, every request left the queue");
            assertEquals(2, a.sendCq.poll(10).size());
        }
    }

    @Test
    void flushedRequestsFreeTheirSlots() {
        pair = new EnginePair(p -> p.ord(0), p -> p.ird(0));
        EngineSide a = pair.initiator;
        a.engine.sendQueueDepth(2);
        MemoryRegion local = a.register(a.buffer(64, 0), Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.rdmaRead(1, local.all(), 0x1234, 0));
        a.qp.postSend(SendRequest.send(2, local.all()));
        a.ch.close();
        pair.pump();
        assertEquals(0, a.engine.stream().sendWrsPosted());
        assertEquals(2, a.sendCq.poll(10).size(), "both flushed");
        a.qp.postSend(SendRequest.send(3, local.all())); // a slot again: completes at once in error
        assertEquals(0, a.engine.stream().sendWrsPosted());
    }

    @Test
    void deviceDefaultAppliesToNewQueuePairs() {
        RdmaDevice device = new RdmaDevice();
        device.setSendQueueDepth(7);
        EngineSide side = new EngineSide(dev.iwarp.ddp.llp.LlpRole.INITIATOR, device);
        try {
            assertEquals(7, side.qp.sendQueueDepth());
            assertThrows(IllegalArgumentException.class, () -> device.setSendQueueDepth(0));
        } finally {
            side.close();
            device.close();
        }
    }
}
