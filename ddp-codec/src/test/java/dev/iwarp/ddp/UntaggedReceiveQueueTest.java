package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static dev.iwarp.ddp.DdpError.INVALID_MO;
import static dev.iwarp.ddp.DdpError.INVALID_MSN_NO_BUFFER;
import static dev.iwarp.ddp.DdpError.INVALID_MSN_RANGE;
import static dev.iwarp.ddp.DdpError.INVALID_QN;
import static dev.iwarp.ddp.DdpError.MESSAGE_TOO_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Untagged Data Sink rules for an in-order receiver (RFC 5041 §5.1–§5.4, §7.2). */
class UntaggedReceiveQueueTest {
    static final int GUARD = 0xEE;
    /** Posted region: octets [16, 48) of a 64-octet target. */
    static final int OFFSET = 16;
    static final int LENGTH = 32;

    ByteBuf target;
    UntaggedReceiveQueue<String> queue;

    @BeforeEach
    void setUp() {
        target = PooledByteBufAllocator.DEFAULT.buffer(64);
        for (int i = 0; i < 64; i++) {
            target.writeByte(GUARD);
        }
        queue = new UntaggedReceiveQueue<>(0);
    }

    @AfterEach
    void tearDown() {
        target.release();
    }

    static byte[] bytes(int n, int first) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (first + i);
        }
        return b;
    }

    static DdpUntaggedSegment seg(boolean last, int qn, int msn, int mo, byte[] payload) {
        return new DdpUntaggedSegment(last, 0x43, 0, qn, msn, mo, Unpooled.wrappedBuffer(payload));
    }

    /** Places and checks the caller's segment is left alone. */
    UntaggedPlacementResult<String> place(DdpUntaggedSegment s) {
        int before = s.content().readerIndex();
        UntaggedPlacementResult<String> r = queue.place(s);
        assertEquals(before, s.content().readerIndex());
        assertEquals(1, s.refCnt(), "the caller keeps the segment");
        s.release();
        return r;
    }

    void assertUntouched() {
        for (int i = 0; i < 64; i++) {
            assertEquals(GUARD, target.getUnsignedByte(i), "octet " + i + " untouched");
        }
    }

    void assertGuardsUntouched() {
        for (int i = 0; i < 64; i++) {
            if (i < OFFSET || i >= OFFSET + LENGTH) {
                assertEquals(GUARD, target.getUnsignedByte(i), "octet " + i + " outside the posted region");
            }
        }
    }

    void assertError(DdpError expected, DdpUntaggedSegment s) {
        UntaggedPlacementResult<String> r = place(s);
        assertTrue(r.isError(), r::toString);
        assertEquals(UntaggedPlacementResult.Kind.ERROR, r.kind());
        assertEquals(expected, r.error());
        assertNull(r.context());
    }

    @Test
    void twoSegmentsDeliverOnL() {
        queue.post(target, OFFSET, LENGTH, "recv-1");
        UntaggedPlacementResult<String> r = place(seg(false, 0, 1, 0, bytes(10, 1)));
        assertEquals(UntaggedPlacementResult.Kind.PLACED, r.kind());
        assertEquals(1, queue.postedCount(), "still in use");
        r = queue.place(new DdpUntaggedSegment(true, 0x46, 0x0012ab00, 0, 1, 10, Unpooled.wrappedBuffer(bytes(22, 11))));
        assertTrue(r.isDelivered(), r::toString);
        assertEquals("recv-1", r.context());
        assertEquals(32, r.messageLength(), "MO + payload of the L=1 segment");
        assertEquals(1, r.msn());
        assertEquals(0, r.qn());
        assertEquals(0x46, r.rsvdUlp());
        assertEquals(0x0012ab00, r.rsvdUlp2(), "Invalidate STag for RDMAP");
        assertEquals(0, queue.postedCount());
        assertEquals(2, queue.expectedMsn());
        assertArrayEquals(bytes(32, 1), ByteBufUtil.getBytes(target, OFFSET, LENGTH));
        assertGuardsUntouched();
        assertEquals(0, target.readerIndex());
        assertEquals(64, target.writerIndex(), "target indices untouched");
    }

    /**
     * The split a framing uses to read a Send's payload straight into the posted buffer: {@code check} refuses as
     * {@code place} would but changes nothing (the queue goes on after a refused check), then the payload goes to
     * {@code placeOffset} and {@code placed} delivers on L.
     */
    @Test
    void checkRefusesLikePlaceButChangesNothingThenPlacedDelivers() {
        assertEquals(INVALID_MSN_NO_BUFFER, queue.check(0, 1, 0, 4), "nothing posted yet");
        queue.post(target, OFFSET, LENGTH, "recv-1");
        assertEquals(INVALID_QN, queue.check(1, 1, 0, 4));
        assertEquals(INVALID_MSN_RANGE, queue.check(0, 2, 0, 4));
        assertEquals(INVALID_MO, queue.check(0, 1, 3, 4));
        assertEquals(MESSAGE_TOO_LONG, queue.check(0, 1, 0, LENGTH + 1));
        assertNull(queue.failure(), "a check never stops the queue");
        assertUntouched();

        assertNull(queue.check(0, 1, 0, 10));
        assertEquals(OFFSET, queue.placeOffset());
        queue.placeAt(queue.placeOffset(), Unpooled.wrappedBuffer(bytes(10, 1)), 0, 10);
        assertEquals(UntaggedPlacementResult.Kind.PLACED, queue.placed(10, false, 0x43, 0).kind());
        assertEquals(INVALID_MO, queue.check(0, 1, 0, 4), "the next segment continues at MO 10");
        assertNull(queue.check(0, 1, 10, 22));
        assertEquals(OFFSET + 10, queue.placeOffset());
        assertNull(queue.view(queue.placeOffset(), 22), "a posted ByteBuf has no view: placeAt is the way");
        queue.placeAt(queue.placeOffset(), Unpooled.wrappedBuffer(bytes(22, 11)), 0, 22);
        UntaggedPlacementResult<String> r = queue.placed(22, true, 0x43, 0);
        assertTrue(r.isDelivered(), r::toString);
        assertEquals("recv-1", r.context());
        assertEquals(32, r.messageLength());
        assertEquals(2, queue.expectedMsn());
        assertArrayEquals(bytes(32, 1), ByteBufUtil.getBytes(target, OFFSET, LENGTH));
        assertGuardsUntouched();
    }

    @Test
    void buffersAreConsumedInPostingOrderOneMessageEach() {
        queue.post(target, 0, 8, "a");
        queue.post(target, 8, 0, "b");
        queue.post(target, 8, 56, "c");
        UntaggedPlacementResult<String> r = place(seg(true, 0, 1, 0, bytes(3, 1)));
        assertEquals("a", r.context());
        assertEquals(3, r.messageLength(), "shorter than the buffer is fine");
        r = place(seg(true, 0, 2, 0, new byte[0]));
        assertEquals("b", r.context());
        assertEquals(0, r.messageLength(), "zero-length Send in a zero-length buffer");
        r = place(seg(true, 0, 3, 0, bytes(56, 100)));
        assertEquals("c", r.context());
        assertEquals(3, r.msn());
        assertArrayEquals(bytes(56, 100), ByteBufUtil.getBytes(target, 8, 56));
        assertEquals(GUARD, target.getUnsignedByte(3), "octets 3..7 of buffer a untouched");
    }

    @Test
    void wrongQn() {
        queue.post(target, OFFSET, LENGTH, "r");
        assertError(INVALID_QN, seg(true, 1, 1, 0, bytes(4, 1)));
        assertUntouched();
    }

    @Test
    void msnOutsideTheWindow() {
        queue.post(target, OFFSET, LENGTH, "r");
        assertError(INVALID_MSN_RANGE, seg(true, 0, 2, 0, bytes(4, 1)));
        assertUntouched();
        UntaggedReceiveQueue<String> q = new UntaggedReceiveQueue<>(0);
        q.post(target, OFFSET, LENGTH, "r");
        assertEquals(INVALID_MSN_RANGE, q.place(seg(true, 0, 0, 0, new byte[0])).error(), "already completed / 0");
    }

    @Test
    void expectedMsnWithoutBuffer() {
        assertError(INVALID_MSN_NO_BUFFER, seg(true, 0, 1, 0, new byte[0]));
        assertUntouched();
    }

    @Test
    void moNotEqualToOctetsReceived() {
        queue.post(target, OFFSET, LENGTH, "r");
        assertError(INVALID_MO, seg(true, 0, 1, 4, bytes(4, 1)));
        assertUntouched();
    }

    @Test
    void moOfALaterSegment() {
        queue.post(target, OFFSET, LENGTH, "r");
        assertEquals(UntaggedPlacementResult.Kind.PLACED, place(seg(false, 0, 1, 0, bytes(8, 1))).kind());
        assertError(INVALID_MO, seg(true, 0, 1, 9, bytes(4, 50)));
        assertArrayEquals(bytes(8, 1), ByteBufUtil.getBytes(target, OFFSET, 8));
        for (int i = OFFSET + 8; i < 64; i++) {
            assertEquals(GUARD, target.getUnsignedByte(i), "nothing of the failed segment placed");
        }
        assertGuardsUntouched();
    }

    @Test
    void messageTooLong() {
        queue.post(target, OFFSET, LENGTH, "r");
        assertError(MESSAGE_TOO_LONG, seg(true, 0, 1, 0, bytes(LENGTH + 1, 1)));
        assertUntouched();
    }

    @Test
    void messageTooLongInItsSecondSegment() {
        queue.post(target, OFFSET, LENGTH, "r");
        place(seg(false, 0, 1, 0, bytes(30, 1)));
        assertError(MESSAGE_TOO_LONG, seg(true, 0, 1, 30, bytes(3, 31)));
        assertArrayEquals(bytes(30, 1), ByteBufUtil.getBytes(target, OFFSET, 30));
        assertEquals(GUARD, target.getUnsignedByte(OFFSET + 30), "nothing of the failed segment placed");
        assertEquals(GUARD, target.getUnsignedByte(OFFSET + 31));
        assertGuardsUntouched();
    }

    @Test
    void checksRunInTheDocumentedOrder() {
        assertEquals(INVALID_QN, new UntaggedReceiveQueue<String>(0).place(seg(true, 1, 5, 7, bytes(40, 0))).error());
        assertEquals(INVALID_MSN_RANGE, new UntaggedReceiveQueue<String>(0).place(seg(true, 0, 5, 7, bytes(40, 0))).error(),
                "MSN before buffer");
        assertEquals(INVALID_MSN_NO_BUFFER, new UntaggedReceiveQueue<String>(0).place(seg(true, 0, 1, 7, bytes(40, 0))).error(),
                "buffer before MO");
        UntaggedReceiveQueue<String> q = new UntaggedReceiveQueue<>(0);
        q.post(target, OFFSET, LENGTH, "r");
        assertEquals(INVALID_MO, q.place(seg(true, 0, 1, 7, bytes(40, 0))).error(), "MO before length");
        assertUntouched();
    }

    @Test
    void errorsAreFatalForTheQueue() {
        queue.post(target, OFFSET, LENGTH, "r");
        assertError(INVALID_MSN_RANGE, seg(true, 0, 9, 0, bytes(4, 1)));
        assertEquals(INVALID_MSN_RANGE, queue.failure());
        assertError(INVALID_MSN_RANGE, seg(true, 0, 1, 0, bytes(4, 1)));
        assertUntouched();
    }

    @Test
    void expectedMsnWrapsModulo2To32() {
        UntaggedReceiveQueue<String> q = new UntaggedReceiveQueue<>(0, 0xFFFFFFFF);
        q.post(target, 0, 4, "a");
        q.post(target, 4, 4, "b");
        q.post(target, 8, 4, "c");
        assertEquals(0xFFFFFFFF, q.place(seg(true, 0, 0xFFFFFFFF, 0, bytes(1, 1))).msn());
        assertEquals(0, q.expectedMsn());
        UntaggedPlacementResult<String> r = q.place(seg(true, 0, 0, 0, bytes(1, 2)));
        assertEquals("b", r.context());
        assertEquals(0, r.msn());
        assertEquals("c", q.place(seg(true, 0, 1, 0, bytes(1, 3))).context());
    }

    @Test
    void flushHandsBackEveryPostedContextInOrder() {
        queue.post(target, 0, 8, "a");
        queue.post(target, 8, 8, "b");
        queue.post(target, 16, 8, "c");
        assertEquals("a", place(seg(true, 0, 1, 0, bytes(8, 1))).context());
        place(seg(false, 0, 2, 0, bytes(4, 1)));
        List<String> flushed = new ArrayList<>();
        queue.flush(flushed::add);
        assertEquals(Arrays.asList("b", "c"), flushed, "including the partly filled one");
        assertEquals(0, queue.postedCount());
        List<String> none = new ArrayList<>();
        queue.flush(none::add);
        assertTrue(none.isEmpty());
        assertEquals(INVALID_MSN_NO_BUFFER, place(seg(true, 0, 2, 0, new byte[0])).error());
    }

    @Test
    void postChecksTheRange() {
        assertThrows(IndexOutOfBoundsException.class, () -> queue.post(target, 60, 5, "x"));
        assertThrows(IndexOutOfBoundsException.class, () -> queue.post(target, -1, 5, "x"));
        assertThrows(IndexOutOfBoundsException.class, () -> queue.post(target, 0, -1, "x"));
        assertEquals(0, queue.postedCount());
    }

    @Test
    void errorResultsAreSharedConstants() {
        assertSame(new UntaggedReceiveQueue<String>(0).place(seg(true, 3, 1, 0, new byte[0])),
                new UntaggedReceiveQueue<Integer>(0).place(seg(true, 3, 1, 0, new byte[0])));
    }

    // UntaggedSlotQueue: queues whose buffers are slots (QN 1 Read Requests / IRD, QN 2 Terminate, QN 3).

    @Test
    void slotQueueLimitsByCredits() {
        UntaggedSlotQueue ird = new UntaggedSlotQueue(1, 2);
        assertNull(ird.accept(1));
        assertNull(ird.accept(2));
        assertEquals(0, ird.credits());
        assertEquals(INVALID_MSN_NO_BUFFER, ird.accept(3), "IRD exhausted");
        assertEquals(3, ird.expectedMsn(), "nothing changes on an error");
        assertEquals(INVALID_MSN_RANGE, ird.accept(4));
        ird.release();
        assertNull(ird.accept(3));
        assertEquals(INVALID_MSN_RANGE, ird.accept(3), "already completed");
        ird.release();
        ird.release();
        assertThrows(IllegalStateException.class, ird::release);
    }

    @Test
    void slotQueueChecksWholeSegments() {
        UntaggedSlotQueue terminate = new UntaggedSlotQueue(2, 1);
        DdpUntaggedSegment wrongQn = seg(true, 1, 1, 0, new byte[0]);
        assertEquals(INVALID_QN, terminate.accept(wrongQn));
        DdpUntaggedSegment badMo = seg(true, 2, 1, 4, new byte[0]);
        assertEquals(INVALID_MO, terminate.accept(badMo));
        assertEquals(1, terminate.credits());
        DdpUntaggedSegment ok = seg(true, 2, 1, 0, new byte[28]);
        assertNull(terminate.accept(ok));
        DdpUntaggedSegment second = seg(true, 2, 2, 0, new byte[0]);
        assertEquals(INVALID_MSN_NO_BUFFER, terminate.accept(second), "only one Terminate");
        for (DdpUntaggedSegment s : List.of(wrongQn, badMo, ok, second)) {
            s.release();
        }
        UntaggedSlotQueue wrapping = new UntaggedSlotQueue(3, 4, 0xFFFFFFFF);
        assertNull(wrapping.accept(0xFFFFFFFF));
        assertNull(wrapping.accept(0));
        assertEquals(1, wrapping.expectedMsn());
    }

    /** A delivery result is the queue's one object, filled again by its next delivery; contexts come back in order. */
    @Test
    void eachDeliveryRefillsTheQueuesOneResult() {
        for (int i = 0; i < 40; i++) { // more than the queue keeps for reuse
            queue.post(target, i % 4 * 16, 16, "recv " + i);
        }
        UntaggedPlacementResult<String> first = queue.place(seg(true, 0, 1, 0, bytes(3, 1)));
        assertEquals("recv 0", first.context());
        assertEquals(3, first.messageLength());
        for (int i = 1; i < 40; i++) {
            UntaggedPlacementResult<String> p = queue.place(seg(true, 0, i + 1, 0, bytes(i % 16, i)));
            assertSame(first, p, "one result object per queue");
            assertEquals("recv " + i, p.context(), "posting order");
            assertEquals(i + 1, p.msn());
            assertEquals(i % 16, p.messageLength());
        }
        List<String> flushed = new ArrayList<>();
        queue.post(target, 0, 16, "late 1");
        queue.post(target, 16, 16, "late 2");
        queue.flush(flushed::add);
        assertEquals(List.of("late 1", "late 2"), flushed, "reused slots keep their own contexts");
        assertEquals(0, queue.postedCount());
    }
}
