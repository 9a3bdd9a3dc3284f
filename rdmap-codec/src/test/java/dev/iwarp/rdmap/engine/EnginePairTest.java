package dev.iwarp.rdmap.engine;

import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcOpcode;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.AfterEach;

import static dev.iwarp.rdmap.engine.RdmaEngineOperationsTest.next;
import static dev.iwarp.rdmap.engine.Regions.bytes;
import static dev.iwarp.rdmap.engine.Regions.fillPattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fixture of the tests that run two engines back to back: the pair, closed after each test, regions,
 * and the round trip of every operation several of them run.
 */
abstract class EnginePairTest {
    final Regions regions = new Regions();
    EnginePair pair;

    @AfterEach
    void closePair() {
        if (pair != null) {
            pair.close();
        }
    }

    /**
     * An RDMA Write, an RDMA Read and a Send from the initiator to the responder of {@link #pair}, each
     * of four segments (the last one short), every octet and every canary checked.
     */
    void writeReadAndSendOfFourSegmentsEach() {
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        int size = 3 * a.qp.connectionParameters().mulpdu() + 5; // four segments, the last one short

        ByteBuf src = a.buffer(size, 0);
        fillPattern(src, 11);
        MemoryRegion srcMr = a.register(src, Access.LOCAL_WRITE);
        ByteBuf dst = regions.guarded(b, size);
        MemoryRegion dstMr = b.register(dst, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        a.qp.postSend(SendRequest.rdmaWrite(1, srcMr.all(), dstMr.stag(), dstMr.iova()));
        pair.pump();
        Completion c = next(a.sendCq);
        assertTrue(c.isSuccess(), c::toString);
        assertArrayEquals(bytes(src, 0, size), bytes(dst, 0, size));
        regions.assertCanaries(dst);

        fillPattern(dst, 23);
        ByteBuf sink = regions.guarded(a, size);
        MemoryRegion sinkMr = a.register(sink, Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.rdmaRead(2, sinkMr.all(), dstMr.stag(), dstMr.iova()));
        pair.pump();
        c = next(a.sendCq);
        assertTrue(c.isSuccess(), c::toString);
        assertEquals(size, c.byteLength());
        assertArrayEquals(bytes(dst, 0, size), bytes(sink, 0, size));
        regions.assertCanaries(sink);

        ByteBuf recv = regions.guarded(b, size);
        MemoryRegion recvMr = b.register(recv, Access.LOCAL_WRITE);
        b.qp.postRecv(RecvRequest.of(7, recvMr.all()));
        a.qp.postSend(SendRequest.send(3, srcMr.all()).solicited());
        pair.pump();
        c = next(a.sendCq);
        assertTrue(c.isSuccess(), c::toString);
        Completion r = next(b.recvCq);
        assertTrue(r.isSuccess(), r::toString);
        assertEquals(7, r.wrId());
        assertEquals(WcOpcode.RECV, r.opcode());
        assertEquals(size, r.byteLength());
        assertTrue(r.solicited());
        assertArrayEquals(bytes(src, 0, size), bytes(recv, 0, size));
        regions.assertCanaries(recv);
    }
}
