package dev.iwarp.verbs;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The queue behind {@link CompletionQueue} exists only once needed; before that it reads as empty. */
class CompletionQueueTest {
    @Test
    void readsAsEmptyBeforeAnyCompletion() throws InterruptedException {
        CompletionQueue cq = new CompletionQueue();
        assertNull(cq.poll());
        assertTrue(cq.poll(8).isEmpty());
        assertEquals(0, cq.size());
        assertNull(cq.take(1, TimeUnit.MILLISECONDS), "times out");
    }

    @Test
    void queuesInOrderWithoutAListener() throws InterruptedException {
        CompletionQueue cq = new CompletionQueue();
        cq.addSuccess(1, WcOpcode.SEND, 64, 0);
        cq.addSuccess(2, WcOpcode.RDMA_WRITE, 128, 0);
        cq.addSuccess(3, WcOpcode.RDMA_READ, 256, 0);
        assertEquals(3, cq.size());
        assertEquals(1, cq.poll().wrId());
        List<Completion> rest = cq.poll(8);
        assertEquals(2, rest.size());
        assertEquals(2, rest.get(0).wrId());
        assertEquals(WcOpcode.RDMA_READ, rest.get(1).opcode());
        assertEquals(256, rest.get(1).byteLength());
        assertNull(cq.take(1, TimeUnit.MILLISECONDS));
    }

    @Test
    void aTakeWaitingBeforeTheFirstCompletionGetsIt() throws Exception {
        CompletionQueue cq = new CompletionQueue();
        Thread adder = new Thread(() -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            cq.addSuccess(7, WcOpcode.SEND, 1, 0);
        });
        adder.start();
        Completion c = cq.take(10, TimeUnit.SECONDS);
        adder.join();
        assertEquals(7, c.wrId());
    }
}
