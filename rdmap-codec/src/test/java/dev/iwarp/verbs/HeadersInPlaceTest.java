package dev.iwarp.verbs;

import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static dev.iwarp.verbs.RdmaEngineOperationsTest.next;
import static dev.iwarp.verbs.Regions.bytes;
import static dev.iwarp.verbs.Regions.fillPattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An engine directly above the DDP codec reads DDP headers in place (issue 13: no segment object per
 * incoming segment); with an inbound handler between the two it takes segment objects. Both paths place
 * the same octets and quote the same header in a Terminate.
 */
class HeadersInPlaceTest extends EnginePairTest {
    @ParameterizedTest(name = "inbound handler between codec and engine: {0}")
    @ValueSource(booleans = {false, true})
    void writesReadsAndSendsArePlacedOnEitherPath(boolean inboundBetween) {
        pair = new EnginePair(inboundBetween);
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        assertEquals(!inboundBetween, a.headersReadInPlace());
        assertEquals(!inboundBetween, b.headersReadInPlace());
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

    /** RFC 5040 §7.1 (rdmap.md §7): the Terminate quotes the offending segment's whole DDP header. */
    @ParameterizedTest(name = "inbound handler between codec and engine: {0}")
    @ValueSource(booleans = {false, true})
    void aWriteToAnUnknownStagIsTerminatedQuotingItsHeaderOnEitherPath(boolean inboundBetween) {
        pair = new EnginePair(inboundBetween);
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        ByteBuf target = regions.guarded(b, 256);
        MemoryRegion mr = b.register(target, Access.REMOTE_WRITE);
        MemoryRegion src = a.register(a.buffer(100, 0x77), Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.rdmaWrite(1, src.all(), mr.stag() ^ 0x100, mr.iova() + 8));
        pair.pump();

        EngineSide.Recorded write = null;
        for (EngineSide.Recorded r : a.written) {
            if (r.tagged && r.opcode() == 0) {
                write = r;
            }
        }
        assertNotNull(write, "the initiator sent its Write");
        TerminateMessage t = RdmaEngineErrorsTest.terminateSentBy(b);
        assertEquals(new TerminateCause(1, 1, 0x00), t.cause(), t.describe()); // DDP tagged: invalid STag
        assertArrayEquals(write.header, t.terminatedDdpHeader(), "control, RsvdULP, STag and TO as sent");
        regions.assertUntouched(target);
        assertEquals(QpState.ERROR, b.qp.state());
    }

    /** RFC 5041 §7.2: a Send with no receive posted is terminated quoting its untagged DDP header. */
    @ParameterizedTest(name = "inbound handler between codec and engine: {0}")
    @ValueSource(booleans = {false, true})
    void aSendWithNoReceivePostedIsTerminatedQuotingItsHeaderOnEitherPath(boolean inboundBetween) {
        pair = new EnginePair(inboundBetween);
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion src = a.register(a.buffer(100, 0x55), Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.send(1, src.all()));
        pair.pump();

        EngineSide.Recorded send = null;
        for (EngineSide.Recorded r : a.written) {
            if (!r.tagged && r.opcode() == 3) {
                send = r;
            }
        }
        assertNotNull(send, "the initiator sent its Send");
        TerminateMessage t = RdmaEngineErrorsTest.terminateSentBy(b);
        assertEquals(new TerminateCause(1, 2, 0x02), t.cause(), t.describe()); // DDP untagged: no buffer
        assertArrayEquals(send.header, t.terminatedDdpHeader(), "control, RsvdULP, QN, MSN and MO as sent");
        assertEquals(QpState.ERROR, b.qp.state());
    }
}
