package dev.iwarp.rdmap.engine;

import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.iwarp.rdmap.engine.Regions.bytes;
import static dev.iwarp.rdmap.engine.Regions.fillPattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Regions registered on demand ({@link ProtectionDomain#registerOnDemand}) between two engines: a peer's Write,
 * Read and Send reach them as any region; they hold memory only from first use to {@link MemoryRegion#discard()}
 * or deregistration, and read as zeros where nothing was placed.
 */
class OnDemandRegionTest {
    static final int SIZE = 1 << 20;
    private EnginePair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    static Completion next(CompletionQueue cq) {
        Completion c = cq.poll();
        assertNotNull(c, "a completion");
        return c;
    }

    private static MemoryRegion onDemand(EngineSide side) {
        return side.pd.registerOnDemand(SIZE, PooledByteBufAllocator.DEFAULT, Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                Access.REMOTE_READ);
    }

    @Test
    void writeAtTheLastOctetsAndReadBack() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion target = onDemand(b);
        assertTrue(target.isOnDemand());
        assertFalse(target.isAllocated(), "no memory at registration");

        ByteBuf src = a.buffer(100, 0);
        fillPattern(src, 100);
        MemoryRegion srcMr = a.register(src, Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.rdmaWrite(1, srcMr.all(), target.stag(), target.iova() + SIZE - 100));
        pair.pump();
        assertTrue(next(a.sendCq).isSuccess());
        assertTrue(target.isAllocated());
        assertArrayEquals(bytes(src, 0, 100), bytes(target.memory(), SIZE - 100, 100), "the last 100 octets");
        assertArrayEquals(new byte[SIZE - 100], bytes(target.memory(), 0, SIZE - 100), "zeros before them");

        ByteBuf sink = a.buffer(SIZE, 0x11);
        MemoryRegion sinkMr = a.register(sink, Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.rdmaRead(2, sinkMr.all(), target.stag(), target.iova()));
        pair.pump();
        assertTrue(next(a.sendCq).isSuccess());
        assertArrayEquals(ByteBufUtil.getBytes(target.memory()), bytes(sink, 0, SIZE), "the whole region read back");
        target.deregister();
        assertFalse(target.isAllocated(), "memory released at deregistration");
    }

    @Test
    void readOfAnUntouchedRegionGivesZeros() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        MemoryRegion target = onDemand(pair.responder);
        ByteBuf sink = a.buffer(4096, 0x5A);
        MemoryRegion sinkMr = a.register(sink, Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.rdmaRead(1, sinkMr.all(), target.stag(), target.iova() + SIZE - 4096));
        pair.pump();
        Completion c = next(a.sendCq);
        assertTrue(c.isSuccess(), c::toString);
        assertArrayEquals(new byte[4096], bytes(sink, 0, 4096));
        target.deregister();
    }

    @Test
    void aWritePastTheEndIsRefusedAndPlacesNothing() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion target = onDemand(b);
        MemoryRegion srcMr = a.register(a.buffer(2, 0x77), Access.LOCAL_WRITE);
        b.qp.postRecv(RecvRequest.of(9, b.register(b.buffer(8, 0), Access.LOCAL_WRITE).all()));
        a.qp.postSend(SendRequest.rdmaWrite(1, srcMr.all(), target.stag(), target.iova() + SIZE - 1));
        pair.pump();
        assertEquals(new TerminateCause(1, 1, 0x01), RdmaEngineErrorsTest.terminateSentBy(b).cause(),
                "DDP tagged base or bounds violation");
        assertFalse(target.isAllocated(), "nothing placed, nothing allocated");
        assertFalse(b.ch.isOpen());
        target.deregister();
    }

    @Test
    void noMemoryForAWriteEndsThatStreamWithALocalCatastrophicError() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        ByteBufAllocator exhausted = new AbstractByteBufAllocator(true) {
            @Override
            protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
                throw new OutOfMemoryError("Cannot reserve " + initialCapacity + " bytes of direct buffer memory");
            }

            @Override
            protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
                throw new OutOfMemoryError("Cannot reserve " + initialCapacity + " bytes of direct buffer memory");
            }

            @Override
            public boolean isDirectBufferPooled() {
                return false;
            }
        };
        MemoryRegion target = b.pd.registerOnDemand(SIZE, exhausted, Access.REMOTE_WRITE);
        MemoryRegion srcMr = a.register(a.buffer(8, 0x77), Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.rdmaWrite(1, srcMr.all(), target.stag(), target.iova()));
        pair.pump();
        assertEquals(new TerminateCause(0, 0, 0xFF), RdmaEngineErrorsTest.terminateSentBy(b).cause(),
                "RDMAP local catastrophic error (RFC 5040 §7.2), as siw codes it");
        assertFalse(b.ch.isOpen(), "that stream closed");
        assertFalse(target.isAllocated());
        target.deregister();
    }

    @Test
    void aPostedReceiveHoldsNoMemoryUntilASendArrives() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion recv = b.pd.registerOnDemand(64 * 1024, PooledByteBufAllocator.DEFAULT, Access.LOCAL_WRITE);
        b.qp.postRecv(RecvRequest.of(1, recv.all()));
        pair.pump();
        assertFalse(recv.isAllocated(), "a waiting receive holds no memory");

        ByteBuf msg = a.buffer(3000, 0);
        fillPattern(msg, 3000);
        MemoryRegion msgMr = a.register(msg, Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.send(2, msgMr.all()));
        pair.pump();
        assertTrue(next(a.sendCq).isSuccess());
        Completion r = next(b.recvCq);
        assertTrue(r.isSuccess(), r::toString);
        assertEquals(3000, r.byteLength());
        assertArrayEquals(bytes(msg, 0, 3000), bytes(recv.memory(), 0, 3000));

        recv.discard(); // the message was consumed: give the memory back
        assertFalse(recv.isAllocated());
        b.qp.postRecv(RecvRequest.of(3, recv.all()));
        a.qp.postSend(SendRequest.send(4, msgMr.slice(0, 10)));
        pair.pump();
        assertTrue(next(a.sendCq).isSuccess());
        assertEquals(10, next(b.recvCq).byteLength());
        assertArrayEquals(bytes(msg, 0, 10), bytes(recv.memory(), 0, 10));
        assertArrayEquals(new byte[64 * 1024 - 10], bytes(recv.memory(), 10, 64 * 1024 - 10),
                "after a discard, zeros beyond the new message (not the old one's octets)");
        recv.deregister();
        assertFalse(recv.isAllocated());
    }
}
