package dev.iwarp.rdmap.engine;

import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Buffers the requester takes from its channel's allocator per RDMA Read: none for the Read Request's 28 octets
 * (RFC 5040 §4.4), which its ORD slot writes into a buffer of its own, reused once the lower layer let go of it.
 * Taking and releasing a pooled buffer per request was the largest item of the requester's loop at 1 KiB Reads.
 */
class ReadRequestBuffersTest {
    private static final int ORD = 4;
    private static final int READS = 64;

    private EnginePair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    /** Counts the buffers it hands out. */
    private static final class CountingAllocator extends AbstractByteBufAllocator {
        int buffers;

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            buffers++;
            return UnpooledByteBufAllocator.DEFAULT.heapBuffer(initialCapacity, maxCapacity);
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            buffers++;
            return UnpooledByteBufAllocator.DEFAULT.directBuffer(initialCapacity, maxCapacity);
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }
    }

    @Test
    void readRequestsTakeNoBufferFromTheChannelsAllocator() {
        readsThroughALowerLayerThat(true);
    }

    /** A lower layer that sends the request's buffer as it is (no copy): the slot takes its buffer again once sent. */
    @Test
    void readRequestsSentAsTheyAreReuseTheirSlotsBufferOnceSent() {
        readsThroughALowerLayerThat(false);
    }

    private void readsThroughALowerLayerThat(boolean copies) {
        pair = copies ? EnginePair.copyingBelow() : new EnginePair(p -> p.ord(ORD), p -> p.ird(ORD));
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion sink = a.register(a.buffer(64, 0), Access.LOCAL_WRITE);
        MemoryRegion source = b.register(b.buffer(64, 0x42), Access.REMOTE_READ);
        SendRequest read = SendRequest.rdmaRead(1, sink.all(), source.stag(), source.iova());
        List<String> failed = new ArrayList<>();
        int[] posted = {0};
        int[] completed = {0};
        a.sendCq.setListener(c -> {
            if (!c.isSuccess()) {
                failed.add(String.valueOf(c));
            }
            completed[0]++;
            if (posted[0] < READS) {
                posted[0]++;
                a.qp.postSend(read);
            }
        });
        CountingAllocator counting = new CountingAllocator();
        a.ch.config().setAllocator(counting);
        for (int i = 0; i < ORD; i++) {
            posted[0]++;
            a.qp.postSend(read);
        }
        pair.pump();
        assertEquals(READS, completed[0]);
        assertTrue(failed.isEmpty(), String.valueOf(failed));
        assertEquals(0x42, sink.memory().getByte(63));
        // the fake lower layer below takes one buffer per ULPDU it writes (its copy of a small ULPDU, or the
        // header it puts before the payload): that and nothing more
        assertEquals(READS, counting.buffers, "buffers per Read Request beyond the lower layer's own: "
                + (counting.buffers - READS) / (double) READS);
    }
}
