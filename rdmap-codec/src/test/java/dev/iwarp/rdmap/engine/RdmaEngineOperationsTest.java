package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.llp.RtrMessage;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcOpcode;
import dev.iwarp.verbs.WcStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;

import static dev.iwarp.rdmap.engine.Regions.bytes;
import static dev.iwarp.rdmap.engine.Regions.fillPattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every RDMA operation between two engines over the framing-free fixture, at the sizes that matter,
 * data checked octet for octet and canaries proving nothing was placed outside a region.
 */
class RdmaEngineOperationsTest extends EnginePairTest {

    static Completion next(CompletionQueue cq) {
        Completion c = cq.poll();
        assertNotNull(c, "a completion");
        return c;
    }

    @Test
    void writeReadAndSendAtEverySize() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        assertEquals(QpState.RTS, a.qp.state());
        assertEquals(QpState.RTS, b.qp.state());
        int mulpdu = a.qp.connectionParameters().mulpdu();
        long wr = 0;
        for (int size : new int[] {0, 1, mulpdu - 1, mulpdu, mulpdu + 1, 1 << 20, 16 << 20}) {
            // RDMA Write a -> b
            ByteBuf src = a.buffer(Math.max(size, 1), 0);
            fillPattern(src, size);
            MemoryRegion srcMr = a.register(src, Access.LOCAL_WRITE);
            ByteBuf dst = regions.guarded(b, Math.max(size, 1));
            MemoryRegion dstMr = b.register(dst, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
            a.qp.postSend(SendRequest.rdmaWrite(++wr, srcMr.slice(0, size), dstMr.stag(), dstMr.iova()));
            pair.pump();
            Completion c = next(a.sendCq);
            assertTrue(c.isSuccess(), c::toString);
            assertEquals(WcOpcode.RDMA_WRITE, c.opcode());
            assertEquals(wr, c.wrId());
            assertArrayEquals(bytes(src, 0, size), bytes(dst, 0, size), "Write of " + size);
            regions.assertCanaries(dst);

            // RDMA Read a <- b (reads back what b holds, after b changes it)
            fillPattern(dst, size + 7);
            ByteBuf sink = regions.guarded(a, Math.max(size, 1));
            MemoryRegion sinkMr = a.register(sink, Access.LOCAL_WRITE);
            a.qp.postSend(SendRequest.rdmaRead(++wr, sinkMr.slice(0, size), dstMr.stag(), dstMr.iova()));
            pair.pump();
            c = next(a.sendCq);
            assertTrue(c.isSuccess(), c::toString);
            assertEquals(WcOpcode.RDMA_READ, c.opcode());
            assertEquals(size, c.byteLength());
            assertArrayEquals(bytes(dst, 0, size), bytes(sink, 0, size), "Read of " + size);
            regions.assertCanaries(sink);

            // Send b -> a into a posted receive
            ByteBuf recv = regions.guarded(a, Math.max(size, 1));
            MemoryRegion recvMr = a.register(recv, Access.LOCAL_WRITE);
            a.qp.postRecv(RecvRequest.of(1000 + size, recvMr.slice(0, size)));
            b.qp.postSend(SendRequest.send(++wr, dstMr.slice(0, size)));
            pair.pump();
            c = next(b.sendCq);
            assertTrue(c.isSuccess(), c::toString);
            Completion r = next(a.recvCq);
            assertTrue(r.isSuccess(), r::toString);
            assertEquals(WcOpcode.RECV, r.opcode());
            assertEquals(size, r.byteLength());
            assertEquals(1000 + size, r.wrId());
            assertArrayEquals(bytes(dst, 0, size), bytes(recv, 0, size), "Send of " + size);
            regions.assertCanaries(recv);
            srcMr.deregister();
            dstMr.deregister();
            sinkMr.deregister();
            recvMr.deregister();
        }
        // every segment fits MULPDU (RFC 5041 §5.2); a message's segments are contiguous (no interleaving)
        for (List<EngineSide.Recorded> written : List.of(a.written, b.written)) {
            EngineSide.Recorded previous = null;
            for (EngineSide.Recorded rec : written) {
                assertTrue(rec.header.length + rec.payloadLength <= mulpdu);
                if (previous != null && !previous.last) {
                    assertEquals(previous.tagged, rec.tagged, "a message is continued by its own next segment");
                    assertEquals(previous.rsvdUlp, rec.rsvdUlp);
                }
                previous = rec;
            }
        }
        assertNull(a.sendCq.poll());
        assertNull(a.recvCq.poll());
    }

    @Test
    void sendVariantsImmediateDataAndSolicitedEvents() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion srcMr = a.register(a.buffer(64, 0x41), Access.LOCAL_WRITE);
        MemoryRegion recvMr = b.register(b.buffer(256, 0), Access.LOCAL_WRITE);
        MemoryRegion victim = b.register(b.buffer(64, 0), Access.REMOTE_WRITE, Access.REMOTE_INVALIDATE);
        for (int i = 0; i < 4; i++) {
            b.qp.postRecv(RecvRequest.of(i, recvMr.slice(i * 64, 64)));
        }
        a.qp.postSend(SendRequest.send(1, srcMr.slice(0, 10)).solicited());
        a.qp.postSend(SendRequest.sendWithInvalidate(2, srcMr.slice(0, 20), victim.stag()));
        a.qp.postSend(SendRequest.sendWithInvalidate(3, srcMr.slice(0, 30), victim.stag()).solicited().unsignaled());
        pair.pump();
        Completion r1 = next(b.recvCq);
        assertTrue(r1.solicited());
        assertEquals(10, r1.byteLength());
        Completion r2 = next(b.recvCq);
        assertTrue(r2.hasInvalidatedStag());
        assertEquals(victim.stag(), r2.invalidatedStag());
        assertFalse(victim.isValid(), "RFC 5040 §5.3: invalidated before delivery");
        // the second invalidation of an invalid STag is an error: Terminate 0/2/0x09
        EngineSide.Recorded t = b.lastWritten();
        assertEquals(7, t.opcode());
        TerminateMessage tm = TerminateMessage.decode(Unpooled.wrappedBuffer(t.payload));
        assertEquals(new TerminateCause(0, 2, 0x09), tm.cause());
        assertEquals(2, a.sendCq.size(), "two signaled Sends completed locally");
    }

    @Test
    void immediateDataConsumesAReceiveAndCarriesEightOctets() {
        pair = new EnginePair();
        MemoryRegion recvMr = pair.responder.register(pair.responder.buffer(16, 0), Access.LOCAL_WRITE);
        pair.responder.qp.postRecv(RecvRequest.of(77, recvMr.all()));
        pair.initiator.qp.postSend(SendRequest.immediateData(5, 0x0102030405060708L).solicited());
        pair.pump();
        Completion c = next(pair.responder.recvCq);
        assertEquals(WcOpcode.RECV_IMMEDIATE, c.opcode());
        assertEquals(0x0102030405060708L, c.immediateData());
        assertTrue(c.solicited());
        assertEquals(WcOpcode.IMMEDIATE_DATA, next(pair.initiator.sendCq).opcode());
        assertEquals(0x49, pair.initiator.lastWritten().rsvdUlp, "RDMAP RV 1, opcode 0x9: with SE (RFC 7306)");
    }

    @Test
    void atomicsFetchAddAndCompareSwapWithMasks() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        ByteBuf target = regions.guarded(b, 16);
        target.setLong(0, 0x00000001_FFFFFFFFL);
        target.setLong(8, 0x1111_2222_3333_4444L);
        MemoryRegion t = b.register(target, Access.REMOTE_ATOMIC, Access.REMOTE_READ, Access.REMOTE_WRITE);
        MemoryRegion result = a.register(a.buffer(16, 0), Access.LOCAL_WRITE);
        // two independent 32-bit adders: the carry out of bit 31 stops at the mask bit
        a.qp.postSend(SendRequest.fetchAdd(1, result.slice(0, 8), t.stag(), t.iova(), 0x00000001_00000001L,
                0x80000000_80000000L));
        a.qp.postSend(SendRequest.compareSwap(2, result.slice(8, 8), t.stag(), t.iova() + 8, 0x0000_0000_3333_0000L,
                0x0000_0000_FFFF_0000L, 0xAAAA_0000_0000_0000L, 0xFFFF_0000_0000_0000L));
        pair.pump();
        Completion c1 = next(a.sendCq);
        assertTrue(c1.isSuccess(), c1::toString);
        assertEquals(0x00000001_FFFFFFFFL, c1.immediateData());
        assertEquals(0x00000001_FFFFFFFFL, result.memory().getLong(0));
        assertEquals(0x00000002_00000000L, target.getLong(0));
        Completion c2 = next(a.sendCq);
        assertEquals(WcOpcode.ATOMIC_COMPARE_SWAP, c2.opcode());
        assertEquals(0x1111_2222_3333_4444L, result.memory().getLong(8));
        assertEquals(0xAAAA_2222_3333_4444L, target.getLong(8));
        regions.assertCanaries(target);
    }

    @Test
    void deepQueuesCompleteInOrderUnderOrd() {
        pair = new EnginePair(p -> p.ord(2), p -> p.ird(2));
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion remote = b.register(b.buffer(4096, 0x5A), Access.REMOTE_READ, Access.REMOTE_WRITE);
        MemoryRegion local = a.register(a.buffer(4096, 0), Access.LOCAL_WRITE);
        MemoryRegion recv = b.register(b.buffer(64 * 200, 0), Access.LOCAL_WRITE);
        for (int i = 0; i < 200; i++) {
            b.qp.postRecv(RecvRequest.of(i, recv.slice(i * 64, 64)));
        }
        for (int i = 0; i < 600; i++) {
            switch (i % 3) {
                case 0:
                    a.qp.postSend(SendRequest.rdmaRead(i, local.slice(i % 64 * 64, 64), remote.stag(), remote.iova()));
                    break;
                case 1:
                    a.qp.postSend(SendRequest.rdmaWrite(i, local.slice(0, 64), remote.stag(), remote.iova() + 64));
                    break;
                default:
                    a.qp.postSend(SendRequest.send(i, local.slice(0, 64)));
            }
        }
        pair.pump();
        long expectedWr = 0;
        for (Completion c : a.sendCq.poll(1000)) {
            assertTrue(c.isSuccess(), c::toString);
            assertEquals(expectedWr++, c.wrId(), "completions in submission order");
        }
        assertEquals(600, expectedWr);
        assertEquals(200, b.recvCq.size());
        assertEquals(QpState.RTS, b.qp.state(), "the responder never saw more than IRD Read Requests at once");
    }

    @Test
    void fencedRequestWaitsForEarlierReads() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion remote = b.register(b.buffer(64, 0x11), Access.REMOTE_READ);
        MemoryRegion recv = b.register(b.buffer(64, 0), Access.LOCAL_WRITE);
        b.qp.postRecv(RecvRequest.of(1, recv.all()));
        MemoryRegion local = a.register(a.buffer(64, 0), Access.LOCAL_WRITE);
        int before = a.written.size();
        a.qp.postSend(SendRequest.rdmaRead(1, local.all(), remote.stag(), remote.iova()));
        a.qp.postSend(SendRequest.send(2, local.slice(0, 16)).fenced());
        assertEquals(before + 1, a.written.size(), "only the Read Request went out: the Send is fenced");
        assertEquals(1, a.written.get(before).opcode());
        pair.pump();
        assertEquals(3, a.written.get(a.written.size() - 1).opcode(), "the Send follows the Read Response");
        assertEquals(1, next(a.sendCq).wrId());
        assertEquals(2, next(a.sendCq).wrId());
        // the Read's data arrived before the fenced Send left: the Send carried it
        assertArrayEquals(bytes(remote.memory(), 0, 16), bytes(recv.memory(), 0, 16));
    }

    @ParameterizedTest(name = "RTR {0}")
    @EnumSource(RtrMessage.class)
    void peerToPeerRtrIsInvisible(RtrMessage rtr) {
        pair = new EnginePair(p -> p.rtr(rtr), p -> p.rtr(rtr));
        assertTrue(pair.responder.qp.established().isSuccess(), "established once the RTR arrived");
        assertEquals(rtr == RtrMessage.WRITE ? 0 : rtr == RtrMessage.READ ? 1 : 3, pair.initiator.written.get(0).opcode(),
                "the Initiator's first message is the RTR");
        // the Responder may now send first
        MemoryRegion recv = pair.initiator.register(pair.initiator.buffer(16, 0), Access.LOCAL_WRITE);
        pair.initiator.qp.postRecv(RecvRequest.of(1, recv.all()));
        MemoryRegion src = pair.responder.register(pair.responder.buffer(16, 0x31), Access.LOCAL_WRITE);
        pair.responder.qp.postSend(SendRequest.send(2, src.all()));
        pair.pump();
        Completion r = next(pair.initiator.recvCq);
        assertEquals(16, r.byteLength());
        assertTrue(next(pair.responder.sendCq).isSuccess());
        assertNull(pair.initiator.sendCq.poll(), "the RTR completes nowhere");
        assertNull(pair.responder.recvCq.poll());
    }

    @Test
    void responderHoldsItsSendsUntilTheRtrArrives() {
        EngineSide b = new EngineSide(dev.iwarp.ddp.llp.LlpRole.RESPONDER);
        try {
            b.establish(b.parameters().rtr(RtrMessage.WRITE).build());
            MemoryRegion src = b.register(b.buffer(16, 1), Access.LOCAL_WRITE);
            b.qp.postSend(SendRequest.send(1, src.all()));
            b.ch.runPendingTasks();
            assertTrue(b.written.isEmpty(), "RFC 6581: nothing before the RTR");
            assertFalse(b.qp.established().isDone());
        } finally {
            b.close();
        }
    }

    @Test
    void gracefulCloseSendsWhatWasPostedThenClosesWithoutAnotherMessage() {
        pair = new EnginePair();
        MemoryRegion recv = pair.responder.register(pair.responder.buffer(64, 0), Access.LOCAL_WRITE);
        pair.responder.qp.postRecv(RecvRequest.of(1, recv.all()));
        pair.responder.qp.postRecv(RecvRequest.of(2, recv.all()));
        MemoryRegion src = pair.initiator.register(pair.initiator.buffer(64, 0x33), Access.LOCAL_WRITE);
        pair.initiator.qp.postSend(SendRequest.send(1, src.all()));
        int written = pair.initiator.written.size();
        pair.initiator.qp.close();
        pair.pump();
        assertEquals(written, pair.initiator.written.size(), "no further segment for the close (RFC 5040 §6.2.1)");
        assertEquals(1, pair.initiator.llp.closeAfterFlushCalls, "the lower layer's flush-then-close");
        assertFalse(pair.initiator.ch.isOpen());
        assertFalse(pair.responder.ch.isOpen(), "the peer saw the close");
        Completion r = next(pair.responder.recvCq);
        assertTrue(r.isSuccess(), "the Send posted before the close was delivered");
        assertEquals(64, r.byteLength());
        assertEquals(WcStatus.WR_FLUSH_ERR, next(pair.responder.recvCq).status(), "the unused receive is flushed");
        assertNull(pair.responder.sendCq.poll(), "no Terminate was needed");
        assertTrue(pair.initiator.qp.close().isDone(), "the close future completed");
    }
}
