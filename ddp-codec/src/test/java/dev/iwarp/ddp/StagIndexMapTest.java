package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The table's primitive STag map, through {@link TaggedBufferTable}'s API and directly. */
class StagIndexMapTest {
    private static final Object PD = new Object();

    @Test
    void agreesWithAHashMapThroughRegistrationsAndDeregistrations() {
        TaggedBufferTable table = new TaggedBufferTable(new Random(7));
        ByteBuf memory = Unpooled.buffer(64).writeZero(64);
        Map<Integer, TaggedBuffer> reference = new HashMap<>();
        List<Integer> live = new ArrayList<>();
        Random r = new Random(42);
        for (int step = 0; step < 20_000; step++) {
            if (live.isEmpty() || r.nextInt(3) != 0) {
                TaggedBuffer b = table.register(PD, memory, 0, AccessFlags.REMOTE_WRITE, false);
                reference.put(b.stag(), b);
                live.add(b.stag());
            } else {
                int stag = live.remove(r.nextInt(live.size()));
                assertTrue(table.deregister(stag));
                reference.remove(stag);
                assertNull(table.lookup(stag));
            }
            if (step % 97 == 0) {
                for (Map.Entry<Integer, TaggedBuffer> e : reference.entrySet()) {
                    assertSame(e.getValue(), table.lookup(e.getKey()));
                    assertNull(table.lookup(e.getKey() ^ 1), "another key of the same index");
                }
                assertEquals(reference.size(), table.size());
            }
        }
        for (int stag : live) {
            assertTrue(table.deregister(stag));
        }
        assertEquals(0, table.size());
        assertEquals(1, memory.refCnt(), "every registration's reference released");
        memory.release();
    }

    @Test
    void stagZeroIsNeverFoundEvenAfterRemovals() {
        TaggedBufferTable table = new TaggedBufferTable(new Random(1));
        ByteBuf memory = Unpooled.buffer(8).writeZero(8);
        List<Integer> stags = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            stags.add(table.register(PD, memory, 0, AccessFlags.REMOTE_READ, false).stag());
        }
        for (int stag : stags) {
            table.deregister(stag);
        }
        assertNull(table.lookup(0));
        assertEquals(TaggedAccessResult.INVALID_STAG, table.check(0, PD, 0, 0, 0));
        memory.release();
    }

    @Test
    void lookupsAllocateNothing() {
        TaggedBufferTable table = new TaggedBufferTable(new Random(3));
        ByteBuf memory = Unpooled.buffer(8).writeZero(8);
        int[] stags = new int[1000];
        for (int i = 0; i < stags.length; i++) {
            stags[i] = table.register(PD, memory, 0, AccessFlags.REMOTE_READ, false).stag();
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(id);
        int found = 0;
        for (int round = 0; round < 100; round++) {
            for (int stag : stags) {
                found += table.lookup(stag) != null ? 1 : 0;
            }
        }
        long allocated = threads.getThreadAllocatedBytes(id) - before;
        assertEquals(100 * stags.length, found);
        // a boxed key per lookup would be 16 octets each, 1.6 MB here
        assertTrue(allocated < 16 * 1024, "100,000 lookups allocated " + allocated + " octets");
        for (int stag : stags) {
            table.deregister(stag);
        }
        memory.release();
    }
}
