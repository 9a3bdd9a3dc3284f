package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

import static dev.iwarp.ddp.AccessFlags.LOCAL_WRITE;
import static dev.iwarp.ddp.AccessFlags.REMOTE_ATOMIC;
import static dev.iwarp.ddp.AccessFlags.REMOTE_READ;
import static dev.iwarp.ddp.AccessFlags.REMOTE_WRITE;
import static dev.iwarp.ddp.TaggedAccessResult.ACCESS_RIGHTS;
import static dev.iwarp.ddp.TaggedAccessResult.BASE_OR_BOUNDS;
import static dev.iwarp.ddp.TaggedAccessResult.INVALID_STAG;
import static dev.iwarp.ddp.TaggedAccessResult.OK;
import static dev.iwarp.ddp.TaggedAccessResult.TO_WRAP;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** STag allocation and the Data Sink's tagged checks (RFC 5041 §7.1, §8). */
class TaggedBufferTableTest {
    static final Object PD = new Object();
    static final Object OTHER_PD = new Object();
    static final long BASE = 0x000055d5c0a0b2a0L;

    /** A Random whose nextInt(bound) answers {@code answers} in turn (then 0x5A). */
    static Random scripted(int... answers) {
        return new Random() {
            private int next;

            @Override
            public int nextInt(int bound) {
                return next < answers.length ? answers[next++] : 0x5A;
            }
        };
    }

    @Test
    void stagIsIndexAndKeyNeverZeroAndUnique() {
        TaggedBufferTable table = new TaggedBufferTable(new Random(1));
        ByteBuf mem = Unpooled.wrappedBuffer(new byte[16]);
        Set<Integer> stags = new HashSet<>();
        Set<Integer> keys = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            TaggedBuffer b = table.register(PD, mem, BASE, REMOTE_WRITE, false);
            int stag = b.stag();
            assertEquals(b.index() << 8 | b.key(), stag);
            assertTrue(b.index() >= 1 && b.index() <= 0xFFFFFF);
            assertNotEquals(0, stag);
            assertTrue(stags.add(stag), "unique");
            keys.add(b.key());
            assertSame(b, table.lookup(stag));
        }
        assertEquals(1000, table.size());
        assertTrue(keys.size() > 200, "keys vary per registration: " + keys.size());
        for (int stag : stags) {
            assertTrue(table.deregister(stag));
        }
        assertEquals(0, table.size());
    }

    /**
     * RFC 5042: STags hard to guess. Knowing one STag must not tell the next: consecutive
     * registrations from SecureRandom land on unrelated indices (sequential allocation, the old
     * behaviour, gave index + 1 every time), spread over the whole 24-bit space.
     */
    @Test
    void indicesAreRandomNotSequential() {
        TaggedBufferTable table = new TaggedBufferTable();
        ByteBuf mem = Unpooled.wrappedBuffer(new byte[1]);
        int n = 256;
        int[] index = new int[n];
        for (int i = 0; i < n; i++) {
            index[i] = table.register(PD, mem, 0, REMOTE_READ, false).index();
        }
        int near = 0;
        int top = 0;
        for (int i = 1; i < n; i++) {
            if (Math.abs(index[i] - index[i - 1]) <= 256) {
                near++; // chance: about 2 * 256 / 2^24 per pair, so ~0.008 of 255 pairs
            }
            if (index[i] > 0x800000) {
                top++;
            }
        }
        assertTrue(near <= 2, near + " of " + (n - 1) + " consecutive indices within 256 of each other");
        assertTrue(top > 80 && top < 175, "indices spread over the space: " + top + " of 255 in the upper half");
    }

    @Test
    void anIndexInUseIsDrawnAgainAndIndexZeroNeverComesOut() {
        // draws are 1 + nextInt(0xFFFFFF): answers 0xFFFFFE, 0 give indices 0xFFFFFF and 1
        TaggedBufferTable table = new TaggedBufferTable(scripted(0xFFFFFE, 0x11, 0xFFFFFE, 0, 0x22));
        ByteBuf mem = Unpooled.wrappedBuffer(new byte[1]);
        TaggedBuffer top = table.register(PD, mem, 0, REMOTE_READ, false);
        assertEquals(0xFFFFFF11, top.stag());
        TaggedBuffer one = table.register(PD, mem, 0, REMOTE_READ, false);
        assertEquals(0x00000122, one.stag(), "index 0xFFFFFF in use: drawn again");
        assertTrue(table.deregister(top.stag()));
        assertTrue(table.deregister(one.stag()));
    }

    @Test
    void aNearlyFullTableTakesTheNextFreeIndexAfterSixtyFourDraws() {
        int[] answers = new int[2 + 64 + 1];
        answers[1] = 0x44; // first registration: index 1, key 0x44
        answers[answers.length - 1] = 0x33; // second: 64 draws of index 1 (zeros), then key 0x33
        TaggedBufferTable table = new TaggedBufferTable(scripted(answers));
        ByteBuf mem = Unpooled.wrappedBuffer(new byte[1]);
        TaggedBuffer first = table.register(PD, mem, 0, REMOTE_READ, false);
        assertEquals(0x00000144, first.stag());
        TaggedBuffer second = table.register(PD, mem, 0, REMOTE_READ, false);
        assertEquals(0x00000233, second.stag(), "64 draws of an index in use, then the next free index");
        assertTrue(table.deregister(first.stag()));
        assertTrue(table.deregister(second.stag()));
    }

    @Test
    void lookupComparesAllThirtyTwoBits() {
        TaggedBufferTable table = new TaggedBufferTable(new Random(7));
        TaggedBuffer b = table.register(PD, Unpooled.wrappedBuffer(new byte[64]), BASE, REMOTE_WRITE, false);
        int stale = b.stag() ^ 0x01;
        assertNull(table.lookup(stale), "key mismatch");
        assertNull(table.lookup(b.stag() + 0x100), "other index");
        assertEquals(INVALID_STAG, table.check(stale, PD, BASE, 1, REMOTE_WRITE));
        assertEquals(INVALID_STAG, table.check(0, PD, BASE, 1, REMOTE_WRITE), "STag 0 is never registered");
        assertFalse(table.invalidate(stale));
        assertFalse(table.deregister(stale));
        assertEquals(OK, table.check(b.stag(), PD, BASE, 64, REMOTE_WRITE));
        assertTrue(table.deregister(b.stag()));
    }

    @Test
    void everyCheckResultInTheDocumentedOrder() {
        TaggedBufferTable table = new TaggedBufferTable(new Random(3));
        TaggedBuffer b = table.register(PD, Unpooled.wrappedBuffer(new byte[0x1000]), 0x1000, REMOTE_WRITE | LOCAL_WRITE,
                false);
        int s = b.stag();
        assertEquals(OK, table.check(s, PD, 0x1000, 0x1000, REMOTE_WRITE));
        assertEquals(OK, table.check(s, PD, 0x1FFF, 1, REMOTE_WRITE | LOCAL_WRITE), "last octet");
        assertEquals(OK, table.check(s, PD, 0x2000, 0, REMOTE_WRITE), "zero octets at exactly base + length");
        // 4: bounds
        assertEquals(BASE_OR_BOUNDS, table.check(s, PD, 0x0FFF, 1, REMOTE_WRITE), "TO below base");
        assertEquals(BASE_OR_BOUNDS, table.check(s, PD, 0x0FFF, 0, REMOTE_WRITE), "zero octets below base");
        assertEquals(BASE_OR_BOUNDS, table.check(s, PD, 0x2000, 1, REMOTE_WRITE), "first octet past the end");
        assertEquals(BASE_OR_BOUNDS, table.check(s, PD, 0x2001, 0, REMOTE_WRITE), "zero octets past the end");
        assertEquals(BASE_OR_BOUNDS, table.check(s, PD, 0x1000, 0x1001, REMOTE_WRITE), "one octet too many");
        assertEquals(BASE_OR_BOUNDS, table.check(s, PD, -16, 0x3000, REMOTE_WRITE), "wraps and still ends past the region");
        // 5: TO wrap — ends past 2^64-1 and wraps into the region's range, so 4 alone would let it through
        assertEquals(TO_WRAP, table.check(s, PD, -16, 0x20, REMOTE_WRITE));
        // 3: rights, before bounds
        assertEquals(ACCESS_RIGHTS, table.check(s, PD, 0x1000, 1, REMOTE_READ));
        assertEquals(ACCESS_RIGHTS, table.check(s, PD, 0, 1 << 20, REMOTE_WRITE | REMOTE_ATOMIC));
        // 1: another PD's STag is answered as one that does not exist (RFC 5042: no probing), before
        // rights and bounds, so its rights and extent stay hidden too
        assertEquals(INVALID_STAG, table.check(s, OTHER_PD, 0x1000, 1, REMOTE_WRITE));
        assertEquals(INVALID_STAG, table.check(s, OTHER_PD, 0, 1 << 20, REMOTE_READ));
        // 1: valid, before everything; zero-length accesses are not exempt
        assertEquals(INVALID_STAG, table.check(s + 0x100, PD, 0x1000, 0, REMOTE_WRITE), "unknown STag, length 0");
        assertTrue(table.invalidate(s));
        assertFalse(table.invalidate(s), "already invalid");
        assertFalse(b.isValid());
        assertSame(b, table.lookup(s), "still registered");
        assertEquals(INVALID_STAG, table.check(s, PD, 0x1000, 1, REMOTE_WRITE));
        assertEquals(INVALID_STAG, table.check(s, OTHER_PD, 0, 1 << 20, REMOTE_READ));
        assertTrue(table.deregister(s));
        assertFalse(table.deregister(s));
        assertNull(table.lookup(s));
    }

    @Test
    void remoteInvalidationOnlyOfOptedInStagsOfTheSamePd() {
        TaggedBufferTable table = new TaggedBufferTable(new Random(5));
        ByteBuf mem = Unpooled.wrappedBuffer(new byte[8]);
        TaggedBuffer plain = table.register(PD, mem, 0, REMOTE_WRITE, false);
        TaggedBuffer optedIn = table.register(PD, mem, 0, REMOTE_WRITE, true);
        assertFalse(table.invalidateRemotely(plain.stag(), PD), "not registered for remote invalidation");
        assertFalse(table.invalidateRemotely(optedIn.stag(), OTHER_PD), "another PD");
        assertFalse(table.invalidateRemotely(optedIn.stag() ^ 1, PD), "unknown STag");
        assertTrue(plain.isValid());
        assertTrue(optedIn.isValid());
        assertTrue(table.invalidateRemotely(optedIn.stag(), PD));
        assertFalse(optedIn.isValid());
        assertFalse(table.invalidateRemotely(optedIn.stag(), PD), "already invalid");
        assertTrue(table.invalidate(plain.stag()), "local invalidation needs no opt-in");
        assertTrue(table.deregister(plain.stag()));
        assertTrue(table.deregister(optedIn.stag()));
    }

    @Test
    void toWrapNearTwoToTheSixtyFour() {
        TaggedBufferTable table = new TaggedBufferTable(new Random(4));
        long top = -0x1000L; // region [2^64 - 0x1000, 2^64)
        TaggedBuffer b = table.register(PD, Unpooled.wrappedBuffer(new byte[0x1000]), top, REMOTE_READ, false);
        int s = b.stag();
        assertEquals(OK, table.check(s, PD, top, 0x1000, REMOTE_READ), "the whole region, last octet 2^64-1");
        assertEquals(OK, table.check(s, PD, -0x100L, 0x100, REMOTE_READ));
        assertEquals(OK, table.check(s, PD, -1L, 1, REMOTE_READ), "octet 2^64-1 itself");
        assertEquals(BASE_OR_BOUNDS, table.check(s, PD, 0L, 0, REMOTE_READ), "TO 0 is below this region's base");
        assertEquals(TO_WRAP, table.check(s, PD, -0x100L, 0x101, REMOTE_READ), "one octet past 2^64-1");
        assertEquals(TO_WRAP, table.check(s, PD, -0x100L, 0x200, REMOTE_READ));
        assertEquals(TO_WRAP, table.check(s, PD, -1L, 2, REMOTE_READ));
        assertThrows(IllegalArgumentException.class,
                () -> table.register(PD, Unpooled.wrappedBuffer(new byte[0x1001]), top, REMOTE_READ, false),
                "a region past 2^64-1 cannot be registered");
        assertTrue(table.deregister(s));
    }

    @Test
    void accessResultsMapToDdpTaggedErrorsAsSiw() {
        assertEquals(0x00, INVALID_STAG.ddpError().errorCode());
        assertEquals(0x01, BASE_OR_BOUNDS.ddpError().errorCode());
        assertEquals(0x03, TO_WRAP.ddpError().errorCode());
        assertEquals(DdpError.INVALID_STAG, ACCESS_RIGHTS.ddpError());
        for (TaggedAccessResult r : TaggedAccessResult.values()) {
            if (r != OK) {
                assertEquals(1, r.ddpError().errorType(), r + ": Tagged Buffer Error");
                assertFalse(r.isOk());
            }
        }
        assertTrue(OK.isOk());
        assertThrows(IllegalStateException.class, OK::ddpError);
    }

    @Test
    void placeAndReadNeverLeaveTheRegion() {
        ByteBuf all = PooledByteBufAllocator.DEFAULT.directBuffer(96);
        for (int i = 0; i < 96; i++) {
            all.writeByte(0xEE);
        }
        all.setIndex(16, 80); // region = octets 16..79
        TaggedBufferTable table = new TaggedBufferTable(new Random(9));
        TaggedBuffer b = table.register(PD, all, BASE, REMOTE_WRITE | REMOTE_READ, true);
        assertEquals(64, b.length());
        assertTrue(b.remoteInvalidate());
        assertEquals(2, all.refCnt(), "the table holds its own reference");

        byte[] data = new byte[64];
        for (int i = 0; i < 64; i++) {
            data[i] = (byte) i;
        }
        ByteBuf src = Unpooled.wrappedBuffer(data);
        b.place(BASE, src);
        assertEquals(0, src.readerIndex(), "source indices untouched");
        ByteBuf tooFar = Unpooled.wrappedBuffer(new byte[8]);
        assertThrows(IndexOutOfBoundsException.class, () -> b.place(BASE + 60, tooFar));
        assertThrows(IndexOutOfBoundsException.class, () -> b.place(BASE - 1, Unpooled.wrappedBuffer(new byte[1])));
        assertThrows(IndexOutOfBoundsException.class, () -> b.place(-8L, Unpooled.wrappedBuffer(new byte[16])));
        assertThrows(IndexOutOfBoundsException.class, () -> b.read(BASE + 1, 64));
        b.place(BASE + 62, Unpooled.wrappedBuffer(new byte[] {(byte) 0xA1, (byte) 0xA2}));
        for (int i = 0; i < 96; i++) {
            int expected = i < 16 || i >= 80 ? 0xEE : i - 16 >= 62 ? 0xA1 + i - 16 - 62 : i - 16;
            assertEquals(expected, all.getUnsignedByte(i), "octet " + i);
        }
        ByteBuf slice = b.read(BASE + 8, 8);
        assertArrayEquals(new byte[] {8, 9, 10, 11, 12, 13, 14, 15}, ByteBufUtil.getBytes(slice));
        assertTrue(table.deregister(b.stag()));
        assertEquals(2, all.refCnt(), "the read slice keeps the memory alive");
        slice.release();
        assertEquals(1, all.refCnt(), "deregister released the table's reference");
        all.release();
    }

    @Test
    void registrationFromManyThreads() throws Exception {
        TaggedBufferTable table = new TaggedBufferTable();
        ByteBuf mem = Unpooled.wrappedBuffer(new byte[8]);
        Set<Integer> stags = ConcurrentHashMap.newKeySet();
        int threads = 4;
        int each = 500;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> list = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < each; i++) {
                    TaggedBuffer b = table.register(PD, mem, 0, REMOTE_READ, false);
                    stags.add(b.stag());
                    if (i % 2 == 0) {
                        table.invalidate(b.stag());
                    }
                }
            });
            th.start();
            list.add(th);
        }
        start.countDown();
        for (Thread th : list) {
            th.join();
        }
        assertEquals(threads * each, stags.size(), "every STag unique");
        assertEquals(threads * each, table.size());
        for (int s : stags) {
            assertTrue(table.deregister(s));
        }
    }

    @Test
    void accessFlagsDescribeThemselves() {
        assertEquals(1, LOCAL_WRITE);
        assertEquals(2, REMOTE_READ);
        assertEquals(4, REMOTE_WRITE);
        assertEquals(8, REMOTE_ATOMIC);
        assertEquals("none", AccessFlags.describe(0));
        assertEquals("LOCAL_WRITE|REMOTE_READ", AccessFlags.describe(LOCAL_WRITE | REMOTE_READ));
        assertEquals("REMOTE_WRITE|REMOTE_ATOMIC", AccessFlags.describe(REMOTE_WRITE | REMOTE_ATOMIC));
        assertEquals("REMOTE_READ|0x30", AccessFlags.describe(0x32));
        assertTrue(AccessFlags.allows(REMOTE_READ | REMOTE_WRITE, REMOTE_WRITE));
        assertFalse(AccessFlags.allows(REMOTE_READ, REMOTE_READ | REMOTE_WRITE));
        assertTrue(AccessFlags.allows(0, 0));
    }
}
