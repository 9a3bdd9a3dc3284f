package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.rdmap.ReadRequestHeader;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryBudget;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.RdmaDevice;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.iwarp.rdmap.engine.RdmaEngineErrorsTest.terminateSentBy;
import static dev.iwarp.rdmap.engine.RdmaEngineErrorsTest.ulpdu;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * With CRC on, each segment of a Read Response carries its own copy of the source (RFC 5044 §4.4): while those copies
 * are queued towards the peer they are memory committed on its behalf, charged to its account of the device's memory
 * budget, and given back once written or dropped; when the budget is short the peer that asked is terminated as for
 * every other budget refusal (RFC 5040 §7.2 Local Catastrophic Error, 0/0/0xFF).
 */
class ReadResponseCopiesBudgetTest {
    private static final int SIZE = 8 * 1024;
    private RdmaDevice device;
    private EnginePair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
        device.close();
    }

    private MemoryBudget pairWithBudget(long limit, boolean crc) {
        device = new RdmaDevice();
        MemoryBudget budget = MemoryBudget.of(limit);
        device.setMemoryBudget(budget);
        pair = EnginePair.cuttingSegmentsBelow(device, p -> p.digestsPayload(crc));
        // a lower layer that frames segments without copying them (as MPA for segments beyond its small-payload
        // copy): each segment's queued copy is the responder's own, the one charged
        pair.responder.llp.copiesUpTo = -1;
        return budget;
    }

    /** A Read Request of the whole of {@code src} from the peer, straight into the responder. */
    private void readRequestFor(MemoryRegion src) {
        ByteBuf hdr = Unpooled.buffer(ReadRequestHeader.LENGTH);
        new ReadRequestHeader(0x1234, 0, SIZE, src.stag(), src.iova()).encode(hdr);
        pair.responder.ch.writeInbound(ulpdu(new DdpUntaggedSegment(true, 0x41, 0, 1, 1, 0, hdr)));
        pair.responder.ch.runPendingTasks();
    }

    private MemoryRegion source() {
        return pair.responder.register(pair.responder.buffer(SIZE, 9), Access.REMOTE_READ); // not on demand: free
    }

    @Test
    void queuedCopiesAreChargedUntilWritten() {
        MemoryBudget budget = pairWithBudget(1 << 20, true);
        MemoryRegion src = source();
        pair.responder.llp.stall(); // the peer does not read: every segment stays queued
        readRequestFor(src);
        assertEquals(SIZE, budget.committed(), "each queued copy is charged to the peer that asked");
        pair.responder.llp.unstall();
        for (Object o; (o = pair.responder.ch.readOutbound()) != null; ) {
            ReferenceCountUtil.release(o); // the socket took them
        }
        assertEquals(0, budget.committed(), "given back once written");
        assertTrue(pair.responder.ch.isOpen());
    }

    @Test
    void queuedCopiesAreGivenBackWhenTheConnectionCloses() {
        MemoryBudget budget = pairWithBudget(1 << 20, true);
        MemoryRegion src = source();
        pair.responder.llp.stall();
        readRequestFor(src);
        assertEquals(SIZE, budget.committed());
        pair.responder.ch.close();
        assertEquals(0, budget.committed(), "dropped with the connection: given back");
    }

    @Test
    void withoutCrcNothingIsCopiedOrCharged() {
        MemoryBudget budget = pairWithBudget(1024, false);
        MemoryRegion src = source();
        pair.responder.llp.stall();
        readRequestFor(src);
        assertEquals(0, budget.committed(), "slices of the source: nothing committed for the peer");
        assertTrue(pair.responder.ch.isOpen());
    }

    @Test
    void aPeerWhoseCopiesExceedTheBudgetIsTerminated() {
        MemoryBudget budget = pairWithBudget(2 * 1024, true);
        MemoryRegion src = source();
        pair.responder.llp.stall();
        readRequestFor(src);
        pair.responder.llp.unstall();
        assertEquals(new TerminateCause(0, 0, 0xFF), terminateSentBy(pair.responder).cause(),
                "RDMAP Local Catastrophic Error, as for every budget refusal");
        assertFalse(pair.responder.ch.isOpen());
        assertTrue(budget.refusals() > 0);
        for (Object o; (o = pair.responder.ch.readOutbound()) != null; ) {
            ReferenceCountUtil.release(o);
        }
        assertEquals(0, budget.committed(), "what was charged is given back");
    }
}
