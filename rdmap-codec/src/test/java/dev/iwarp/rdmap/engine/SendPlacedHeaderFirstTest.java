package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.ddp.llp.Placement;
import dev.iwarp.ddp.llp.UlpduReceiver;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcStatus;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Send reaches the receiver header first, as a framing that reads large payloads straight into their
 * destination hands it over: once the untagged queue's checks pass (RFC 5041 §7.2) the header is answered with
 * the posted receive, the payload goes there in as many reads as the socket gives, and the receive completes
 * only when the framing reports it placed. A Send that fails a check is answered "deliver" and refused whole,
 * nothing of it placed.
 */
class SendPlacedHeaderFirstTest extends EnginePairTest {
    private static final int HEADER = DdpUntaggedSegment.HEADER_LENGTH;

    /** The ULPDUs {@code a} wrote for its Sends, taken off its channel instead of reaching {@code b}. */
    private static List<ByteBuf> sent(EngineSide a, int size, int fill, int count) {
        MemoryRegion src = a.register(a.buffer(size, fill), Access.LOCAL_WRITE);
        for (int i = 0; i < count; i++) {
            a.qp.postSend(SendRequest.send(100 + i, src.all()));
        }
        a.ch.runPendingTasks();
        List<ByteBuf> ulpdus = a.drainUlpdus();
        assertEquals(count, ulpdus.size(), "one segment per Send");
        return ulpdus;
    }

    private static UlpduReceiver receiverOf(EngineSide side) {
        UlpduReceiver r = side.llp.receiver();
        assertNotNull(r, "the engine bound its receiver");
        return r;
    }

    /** A Send of {@code size} octets from the initiator: its header is answered "deliver", then the whole is refused. */
    private TerminateMessage deliveredWholeAndRefused(EngineSide b, int size) {
        ByteBuf ulpdu = sent(pair.initiator, size, 0x5a, 1).get(0);
        try {
            UlpduReceiver receiver = receiverOf(b);
            assertEquals(Placement.Kind.DELIVER, receiver.onHeader(ulpdu, HEADER, size).kind());
            receiver.onPayload(ulpdu);
        } finally {
            ulpdu.release();
        }
        return RdmaEngineErrorsTest.terminateSentBy(b);
    }

    @Test
    void aSendsPayloadGoesIntoThePostedReceiveInPiecesAndCompletesOncePlaced() {
        pair = new EnginePair();
        EngineSide b = pair.responder;
        ByteBuf recv = regions.guarded(b, 200);
        b.qp.postRecv(RecvRequest.of(7, b.register(recv, Access.LOCAL_WRITE).slice(10, 190)));
        ByteBuf ulpdu = sent(pair.initiator, 150, 0x5a, 1).get(0);
        try {
            UlpduReceiver receiver = receiverOf(b);
            Placement p = receiver.onHeader(ulpdu, HEADER, 150);
            assertEquals(Placement.Kind.PLACE, p.kind(), "the posted receive is the destination");
            ByteBuf view = p.target().view(p.offset(), 150);
            assertNotNull(view, "a view over the receive's own memory, for the socket to read into");
            try {
                int at = ulpdu.readerIndex() + HEADER;
                for (int piece : new int[] {1, 60, 89}) { // as a socket might give them
                    view.writeBytes(ulpdu, at, piece);
                    at += piece;
                }
            } finally {
                view.release();
            }
            assertNull(b.recvCq.poll(), "no completion before the framing reports the payload placed");
            receiver.onPlaced();
        } finally {
            ulpdu.release();
        }
        Completion c = b.recvCq.poll();
        assertNotNull(c);
        assertTrue(c.isSuccess(), c::toString);
        assertEquals(7, c.wrId());
        assertEquals(150, c.byteLength());
        for (int i = 0; i < 200; i++) {
            assertEquals((byte) (i >= 10 && i < 160 ? 0x5a : Regions.CANARY), recv.getByte(i), "octet " + i);
        }
        regions.assertCanaries(recv);
    }

    @Test
    void aSendLongerThanThePostedReceiveIsDeliveredWholeAndRefusedNothingPlaced() {
        pair = new EnginePair();
        EngineSide b = pair.responder;
        ByteBuf recv = regions.guarded(b, 100);
        b.qp.postRecv(RecvRequest.of(7, b.register(recv, Access.LOCAL_WRITE).all()));
        TerminateMessage t = deliveredWholeAndRefused(b, 150);
        assertEquals(new TerminateCause(1, 2, 0x05), t.cause(), t.describe()); // DDP untagged: message too long
        regions.assertUntouched(recv);
        assertEquals(QpState.ERROR, b.qp.state());
    }

    @Test
    void aSendWithNoReceivePostedIsDeliveredWholeAndRefused() {
        pair = new EnginePair();
        EngineSide b = pair.responder;
        TerminateMessage t = deliveredWholeAndRefused(b, 40);
        assertEquals(new TerminateCause(1, 2, 0x02), t.cause(), t.describe()); // DDP untagged: no buffer
    }

    /** The stream failed while the payload was arriving: the receive is flushed, never completed as received. */
    @Test
    void aSendWhosePayloadArrivesAfterTheStreamFailedCompletesOnlyAsFlushed() {
        pair = new EnginePair();
        EngineSide b = pair.responder;
        ByteBuf recv = regions.guarded(b, 100);
        b.qp.postRecv(RecvRequest.of(7, b.register(recv, Access.LOCAL_WRITE).all()));
        ByteBuf ulpdu = sent(pair.initiator, 50, 0x5a, 1).get(0);
        try {
            UlpduReceiver receiver = receiverOf(b);
            Placement p = receiver.onHeader(ulpdu, HEADER, 50);
            assertEquals(Placement.Kind.PLACE, p.kind());
            b.ch.close();
            b.ch.runPendingTasks();
            p.target().placeAt(p.offset(), ulpdu, ulpdu.readerIndex() + HEADER, 50);
            receiver.onPlaced();
        } finally {
            ulpdu.release();
        }
        Completion c = b.recvCq.poll();
        assertNotNull(c);
        assertFalse(c.isSuccess(), c::toString);
        assertEquals(WcStatus.WR_FLUSH_ERR, c.status());
        assertNull(b.recvCq.poll(), "one completion for the receive");
    }

    /** Two Sends, two receives: each goes to its own receive in posting order (RFC 5041 §5.3). */
    @Test
    void consecutiveSendsFillConsecutiveReceives() {
        pair = new EnginePair();
        EngineSide b = pair.responder;
        ByteBuf first = regions.guarded(b, 64);
        ByteBuf second = regions.guarded(b, 64);
        b.qp.postRecv(RecvRequest.of(1, b.register(first, Access.LOCAL_WRITE).all()));
        b.qp.postRecv(RecvRequest.of(2, b.register(second, Access.LOCAL_WRITE).all()));
        List<ByteBuf> ulpdus = sent(pair.initiator, 64, 0x33, 2);
        UlpduReceiver receiver = receiverOf(b);
        try {
            for (ByteBuf u : ulpdus) {
                Placement p = receiver.onHeader(u, HEADER, 64);
                assertEquals(Placement.Kind.PLACE, p.kind());
                ByteBuf view = p.target().view(p.offset(), 64);
                view.writeBytes(u, u.readerIndex() + HEADER, 64);
                view.release();
                receiver.onPlaced();
            }
        } finally {
            ulpdus.forEach(ByteBuf::release);
        }
        assertEquals(1, b.recvCq.poll().wrId());
        assertEquals(2, b.recvCq.poll().wrId());
        byte[] expected = new byte[64];
        java.util.Arrays.fill(expected, (byte) 0x33);
        assertArrayEquals(expected, Regions.bytes(first, 0, 64));
        assertArrayEquals(expected, Regions.bytes(second, 0, 64));
        regions.assertCanaries(first);
        regions.assertCanaries(second);
    }
}
