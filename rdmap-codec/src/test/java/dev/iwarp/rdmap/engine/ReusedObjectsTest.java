package dev.iwarp.rdmap.engine;

import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionView;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static dev.iwarp.rdmap.engine.Regions.bytes;
import static dev.iwarp.rdmap.engine.Regions.fillPattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The objects the engine reuses instead of making one per work request: the completion a
 * reusing listener is handed, the promises of Sends, Writes and Read Responses, and the ORD slots. Every
 * completion must still carry its own request's fields, in submission order.
 */
class ReusedObjectsTest extends EnginePairTest {

    /** What a listener saw during its call, as text (the object itself may be refilled after). */
    private static String seen(CompletionView c) {
        return c.wrId() + " " + c.status() + " " + c.opcode() + " " + c.byteLength() + " imm " + c.immediateData()
                + (c.hasInvalidatedStag() ? " inv " + c.invalidatedStag() : "") + (c.solicited() ? " SE" : "");
    }

    @Test
    void aReusingListenerSeesEachCompletionsOwnFieldsInSubmissionOrder() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        List<String> sends = new ArrayList<>();
        List<String> receives = new ArrayList<>();
        Set<CompletionView> objects = Collections.newSetFromMap(new IdentityHashMap<>());
        a.sendCq.setReusingListener(c -> {
            sends.add(seen(c) + (c instanceof Completion ? " own" : ""));
            if (!(c instanceof Completion)) {
                objects.add(c);
            }
        });
        b.recvCq.setReusingListener(c -> {
            receives.add(seen(c) + (c instanceof Completion ? " own" : ""));
            if (!(c instanceof Completion)) {
                objects.add(c);
            }
        });

        ByteBuf src = a.buffer(4096, 0);
        fillPattern(src, 4096);
        MemoryRegion srcMr = a.register(src, Access.LOCAL_WRITE);
        ByteBuf dst = regions.guarded(b, 4096);
        MemoryRegion dstMr = b.register(dst, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
                Access.REMOTE_ATOMIC);
        ByteBuf sink = regions.guarded(a, 4096);
        MemoryRegion sinkMr = a.register(sink, Access.LOCAL_WRITE);
        ByteBuf recv = regions.guarded(b, 4096);
        MemoryRegion recvMr = b.register(recv, Access.LOCAL_WRITE);
        b.qp.postRecv(RecvRequest.of(100, recvMr.slice(0, 300)));
        b.qp.postRecv(RecvRequest.of(101, recvMr.slice(300, 8)));

        a.qp.postSend(SendRequest.rdmaWrite(1, srcMr.slice(0, 1000), dstMr.stag(), dstMr.iova()));
        a.qp.postSend(SendRequest.rdmaRead(2, sinkMr.slice(0, 2000), dstMr.stag(), dstMr.iova()));
        a.qp.postSend(SendRequest.rdmaWrite(3, srcMr.slice(0, 10), dstMr.stag(), dstMr.iova()).unsignaled());
        a.qp.postSend(SendRequest.send(4, srcMr.slice(0, 300)).solicited());
        a.qp.postSend(SendRequest.fetchAdd(5, sinkMr.slice(4000, 8), dstMr.stag(), dstMr.iova() + 2048, 7, 0));
        a.qp.postSend(SendRequest.immediateData(6, 0x1122334455667788L));
        pair.pump();

        // the Write (1) finished before the Read (2) it precedes; 3 was unsignaled; 5 returns the original value.
        // A success that waited for an earlier request (4 for the Read, 6 for the atomic) was kept as its own object
        assertEquals(List.of(
                "1 SUCCESS RDMA_WRITE 1000 imm 0",
                "2 SUCCESS RDMA_READ 2000 imm 0",
                "4 SUCCESS SEND 300 imm 0 own",
                "5 SUCCESS ATOMIC_FETCH_ADD 8 imm " + sink.getLong(4000),
                "6 SUCCESS IMMEDIATE_DATA 0 imm 0 own"), sends); // Immediate Data has no SGE, no octets
        assertEquals(sink.getLong(4000) + 7, dst.getLong(2048));
        assertEquals(List.of("100 SUCCESS RECV 300 imm 0 SE", "101 SUCCESS RECV_IMMEDIATE 0 imm 1234605616436508552"),
                receives);
        assertEquals(1, objects.size(), "every other call got the one refilled object");
        assertArrayEquals(bytes(src, 0, 1000), bytes(dst, 0, 1000));
        assertArrayEquals(bytes(dst, 0, 2000), bytes(sink, 0, 2000));
        assertArrayEquals(bytes(src, 0, 300), bytes(recv, 0, 300));
        regions.assertCanaries(dst);
        regions.assertCanaries(sink);
    }

    @Test
    void aCompletionAddedWhileTheListenerRunsComesAsItsOwnObjectAndTheOuterOneKeepsItsFields() {
        pair = new EnginePair();
        EnginePair other = new EnginePair(); // same thread: its write completes inside our listener's call
        try {
            EngineSide a = pair.initiator;
            EngineSide b = pair.responder;
            EngineSide c2 = other.initiator;
            ByteBuf src = a.buffer(64, 0);
            MemoryRegion srcMr = a.register(src, Access.LOCAL_WRITE);
            MemoryRegion dstMr = b.register(regions.guarded(b, 64), Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            MemoryRegion src2 = c2.register(c2.buffer(64, 0), Access.LOCAL_WRITE);
            MemoryRegion dst2 = other.responder.register(regions.guarded(other.responder, 64), Access.LOCAL_WRITE,
                    Access.REMOTE_WRITE);
            List<String> seen = new ArrayList<>();
            List<CompletionView> nested = new ArrayList<>();
            c2.sendCq.setReusingListener(c -> {
                seen.add("nested " + seen(c));
                nested.add(c);
            });
            a.sendCq.setReusingListener(c -> {
                String before = seen(c);
                c2.qp.postSend(SendRequest.rdmaWrite(2, src2.slice(0, 16), dst2.stag(), dst2.iova()));
                seen.add(before.equals(seen(c)) ? before : before + " changed to " + seen(c));
            });
            a.qp.postSend(SendRequest.rdmaWrite(1, srcMr.slice(0, 32), dstMr.stag(), dstMr.iova()));
            pair.pump();
            other.pump();
            assertEquals(List.of("nested 2 SUCCESS RDMA_WRITE 16 imm 0", "1 SUCCESS RDMA_WRITE 32 imm 0"), seen);
            assertInstanceOf(Completion.class, nested.get(0), "the nested completion is its own object");
            assertEquals(2, nested.get(0).wrId(), "and keeps its fields after the call");
        } finally {
            other.close();
        }
    }

    @Test
    void manyWritesReadsAndSendsPostedFromTheListenerEachCompleteOnceWithTheirOwnData() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        int rounds = 300;
        ByteBuf src = a.buffer(rounds, 0);
        fillPattern(src, rounds);
        MemoryRegion srcMr = a.register(src, Access.LOCAL_WRITE);
        ByteBuf dst = regions.guarded(b, rounds);
        MemoryRegion dstMr = b.register(dst, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        ByteBuf sink = regions.guarded(a, rounds);
        MemoryRegion sinkMr = a.register(sink, Access.LOCAL_WRITE);
        ByteBuf recv = regions.guarded(b, rounds);
        MemoryRegion recvMr = b.register(recv, Access.LOCAL_WRITE);
        b.recvCq.setReusingListener(c -> { });
        for (int i = 0; i < rounds; i++) {
            b.qp.postRecv(RecvRequest.of(i, recvMr.slice(i, 1)));
        }
        List<Long> completed = new ArrayList<>();
        a.sendCq.setReusingListener(c -> {
            assertTrue(c.isSuccess(), c::toString);
            completed.add(c.wrId());
            long next = c.wrId() + 1;
            if (next < 3L * rounds) {
                int i = (int) (next / 3);
                switch ((int) (next % 3)) {
                    case 0 -> a.qp.postSend(SendRequest.rdmaWrite(next, srcMr.slice(i, 1), dstMr.stag(), dstMr.iova() + i));
                    case 1 -> a.qp.postSend(SendRequest.rdmaRead(next, sinkMr.slice(i, 1), dstMr.stag(), dstMr.iova() + i));
                    default -> a.qp.postSend(SendRequest.send(next, srcMr.slice(i, 1)));
                }
            }
        });
        a.qp.postSend(SendRequest.rdmaWrite(0, srcMr.slice(0, 1), dstMr.stag(), dstMr.iova()));
        for (int i = 0; i < 4 * rounds && completed.size() < 3 * rounds; i++) {
            pair.pump();
        }
        List<Long> expected = new ArrayList<>();
        for (long i = 0; i < 3L * rounds; i++) {
            expected.add(i);
        }
        assertEquals(expected, completed);
        assertArrayEquals(bytes(src, 0, rounds), bytes(dst, 0, rounds));
        assertArrayEquals(bytes(src, 0, rounds), bytes(sink, 0, rounds));
        assertArrayEquals(bytes(src, 0, rounds), bytes(recv, 0, rounds));
        regions.assertCanaries(dst);
        regions.assertCanaries(sink);
        regions.assertCanaries(recv);
    }

    @Test
    void aSpareSendPromiseKeepsNoRequestWhileTheStreamIsIdle() throws InterruptedException {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion srcMr = a.register(a.buffer(16, 0), Access.LOCAL_WRITE);
        MemoryRegion recvMr = b.register(regions.guarded(b, 16), Access.LOCAL_WRITE);
        b.qp.postRecv(RecvRequest.of(1, recvMr.slice(0, 16)));
        SendRequest send = SendRequest.send(2, srcMr.slice(0, 16));
        WeakReference<SendRequest> sent = new WeakReference<>(send);
        a.qp.postSend(send);
        send = null;
        pair.pump();
        CompletionView c = a.sendCq.poll();
        assertTrue(c != null && c.isSuccess() && c.wrId() == 2, String.valueOf(c));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (sent.get() != null && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(10);
        }
        assertNull(sent.get(), "the completed Send's request (its SGE, region, memory) is held by nothing");
        assertTrue(a.qp.channel().isOpen());
    }
}
