package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.MemoryAccount;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryBudget;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.RdmaDevice;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import static dev.iwarp.rdmap.engine.RdmaEngineErrorsTest.terminateSentBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A device's memory budget: on-demand regions reserve their memory from their domain's account when a peer's
 * message first needs it; when the budget is spent only the stream that asked gets a Terminate, and the headroom
 * still lets a new session get its first buffers.
 */
class MemoryBudgetTest {
    private static final int K64 = 64 * 1024;

    @Test
    void headroomIsOnlyForAccountsWithinTheNewSessionAllowance() {
        MemoryBudget b = MemoryBudget.of(1024 * 1024, 256 * 1024, 128 * 1024);
        MemoryBudget.Account hog = b.newAccount();
        assertTrue(hog.tryReserve(768 * 1024));
        assertFalse(hog.tryReserve(1), "beyond limit - headroom for an account past the allowance");
        MemoryBudget.Account fresh = b.newAccount();
        assertTrue(fresh.tryReserve(128 * 1024), "a new session spends the headroom");
        assertFalse(fresh.tryReserve(1), "past its allowance it is held to limit - headroom too");
        assertEquals(896 * 1024, b.committed());
        assertEquals(2, b.refusals());
        hog.release(768 * 1024);
        assertEquals(0, hog.held());
        assertTrue(fresh.tryReserve(K64));
        assertEquals(192 * 1024, b.committed());
        assertThrows(IllegalArgumentException.class, () -> MemoryBudget.of(10, 11, 0));
    }

    @Test
    void withoutABudgetDomainsAreUnlimited() {
        RdmaDevice device = new RdmaDevice();
        assertSame(MemoryAccount.UNLIMITED, device.allocPd().memoryAccount());
        device.close();
    }

    private static MemoryRegion onDemand(EngineSide side) {
        return side.pd.registerOnDemand(K64, PooledByteBufAllocator.DEFAULT, Access.LOCAL_WRITE,
                Access.REMOTE_WRITE);
    }

    private static boolean write(EnginePair pair, MemoryRegion src, MemoryRegion target, long wrId) {
        pair.initiator.qp.postSend(SendRequest.rdmaWrite(wrId, src.slice(0, 16), target.stag(), target.iova()));
        pair.pump();
        return pair.responder.ch.isOpen();
    }

    @Test
    void aPeerBeyondTheBudgetIsTerminatedAndANewSessionStillStarts() {
        RdmaDevice device = new RdmaDevice();
        MemoryBudget budget = MemoryBudget.of(3 * K64, K64, K64);
        device.setMemoryBudget(budget);
        EnginePair hog = new EnginePair(device);
        EnginePair fresh = null;
        try {
            MemoryRegion src = hog.initiator.register(hog.initiator.buffer(16, 7), Access.LOCAL_WRITE);
            MemoryRegion t1 = onDemand(hog.responder);
            MemoryRegion t2 = onDemand(hog.responder);
            MemoryRegion t3 = onDemand(hog.responder);
            assertTrue(write(hog, src, t1, 1));
            assertTrue(write(hog, src, t2, 2));
            assertEquals(2 * K64, budget.committed());
            assertFalse(write(hog, src, t3, 3), "the third region's memory is refused: its stream ends");
            assertEquals(new TerminateCause(0, 0, 0xFF), terminateSentBy(hog.responder).cause(),
                    "RDMAP Local Catastrophic Error");
            assertFalse(t3.isAllocated(), "nothing placed");
            assertEquals(2 * K64, budget.committed());

            fresh = new EnginePair(device); // another peer: its own domain and account
            MemoryRegion src2 = fresh.initiator.register(fresh.initiator.buffer(16, 8), Access.LOCAL_WRITE);
            MemoryRegion t4 = onDemand(fresh.responder);
            assertTrue(write(fresh, src2, t4, 4), "a new session's first buffer comes out of the headroom");
            assertEquals(3 * K64, budget.committed());
            t1.deregister();
            t2.deregister();
            t4.deregister();
            assertEquals(0, budget.committed(), "given back at deregistration");
        } finally {
            hog.close();
            if (fresh != null) {
                fresh.close();
            }
            device.close();
        }
    }
}
