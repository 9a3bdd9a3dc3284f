package dev.iwarp.rdmap.engine;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The transmitter's flush rules on their own: a counter stands for the channel's flush. */
class FlushPolicyTest {
    private int flushes;
    private FlushPolicy policy;

    @BeforeEach
    void setUp() {
        flushes = 0;
        policy = new FlushPolicy(() -> flushes++);
    }

    @Test
    void aReadBatchFlushesOnceAtItsEndNeverPerMessage() {
        policy.readStarted();
        for (int i = 0; i < 10; i++) {
            policy.readStarted(); // every ULPDU of the batch
            assertFalse(policy.postFlushes(), "a post inside the batch leaves its flush to the batch's end");
            assertFalse(policy.afterWrites(true, policy.postFlushes()), "no flush per message inside a batch");
        }
        assertEquals(0, flushes);
        policy.readComplete();
        assertEquals(1, flushes, "one flush at the batch's end");
        assertFalse(policy.inReadBatch());
        assertTrue(policy.postFlushes(), "outside a batch a post flushes what it wrote");
        assertTrue(policy.afterWrites(true, policy.postFlushes()));
    }

    @Test
    void nothingWrittenNothingFlushed() {
        assertFalse(policy.afterWrites(false, true));
    }

    @Test
    void writabilityReturningFlushesWhatItWrote() {
        policy.readStarted();
        // channelWritabilityChanged transmits with a flush asked for, even inside a batch: the writes it
        // makes were waiting for the socket, not for the batch
        assertTrue(policy.afterWrites(true, true));
    }

    @Test
    void heldRequestsGoOutOnceNoMoreThanHalfOfOrdRemain() {
        int ord = 8;
        policy.readStarted();
        for (int i = 0; i < 4; i++) {
            policy.requestWritten();
        }
        // 8 outstanding, 4 of them held (not on the wire): 4 on the wire, half of ORD
        policy.responseArrived(8, ord);
        assertEquals(1, flushes, "4 of ORD 8 on the wire: the held requests go now");
        policy.responseArrived(7, ord);
        assertEquals(1, flushes, "nothing held any more");
    }

    @Test
    void heldRequestsWaitWhileMoreThanHalfOfOrdRemain() {
        int ord = 8;
        policy.readStarted();
        policy.requestWritten();
        policy.responseArrived(7, ord); // 6 on the wire
        assertEquals(0, flushes);
        policy.responseArrived(6, ord); // 5 on the wire
        assertEquals(0, flushes);
        policy.responseArrived(5, ord); // 4 on the wire
        assertEquals(1, flushes);
    }

    @Test
    void requestsOutsideABatchAreNotHeld() {
        policy.requestWritten();
        policy.responseArrived(0, 8);
        assertEquals(0, flushes, "a request outside a batch flushed itself");
    }

    @Test
    void theBatchEndForgetsHeldRequests() {
        policy.readStarted();
        policy.requestWritten();
        policy.readComplete();
        assertEquals(1, flushes);
        policy.responseArrived(0, 8);
        assertEquals(1, flushes, "the batch's flush took the held request");
    }

    @Test
    void aFlushAskedByANestedTransmitIsMadeByTheRunningOne() {
        policy.askedWhileTransmitting(true);
        assertTrue(policy.afterWrites(true, false), "the running loop flushes for the nested call");
        assertFalse(policy.afterWrites(true, false), "once");
    }

    @Test
    void aDeferredFlushIsOwedUntilMadeAndTheReportTaskQueuedOnce() {
        assertTrue(policy.deferToReport(true), "the report task is queued");
        assertFalse(policy.deferToReport(true), "not twice");
        policy.reportRunning();
        assertTrue(policy.afterWrites(false, false), "the owed flush is made even when nothing new was written");
        policy.flushNow();
        assertEquals(1, flushes);
        assertFalse(policy.afterWrites(false, false), "paid");
        assertTrue(policy.deferToReport(false), "queued again after it ran");
    }

    @Test
    void aClosedConnectionEndsTheBatch() {
        policy.readStarted();
        policy.connectionClosed();
        assertTrue(policy.postFlushes());
        assertEquals(0, flushes);
    }
}
