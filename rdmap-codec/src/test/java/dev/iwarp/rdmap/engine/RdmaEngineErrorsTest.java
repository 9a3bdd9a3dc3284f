package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.rdmap.ReadRequestHeader;
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
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static dev.iwarp.rdmap.engine.RdmaEngineOperationsTest.next;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every error a peer can cause, over the framing-free fixture: the exact Terminate on the wire
 * (RFC 5040 §4.7, §7: layer, type, code, M D R, copied headers), both sides' completion statuses, the
 * close, and canaries proving nothing was placed from a refused segment.
 */
class RdmaEngineErrorsTest extends EnginePairTest {

    /** Posts a Read that is still outstanding when the peer's Terminate arrives. */
    private static MemoryRegion armRead(EngineSide a, EngineSide b) {
        MemoryRegion sink = a.register(a.buffer(8, 0), Access.LOCAL_WRITE);
        MemoryRegion recv = b.register(b.buffer(8, 0), Access.LOCAL_WRITE);
        b.qp.postRecv(RecvRequest.of(900, recv.all()));
        return sink;
    }

    static TerminateMessage terminateSentBy(EngineSide side) {
        EngineSide.Recorded t = side.lastWritten();
        assertNotNull(t);
        assertEquals(7, t.opcode(), "last message is a Terminate");
        assertArrayEquals(new byte[] {0x41, 0x47, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0}, t.header,
                "untagged, last, RDMAP Terminate, QN 2, MSN 1, MO 0 (RFC 5040 §5.4)");
        return TerminateMessage.decode(Unpooled.wrappedBuffer(t.payload));
    }

    private void assertClosedWithFlush(WcStatus initiatorStatus) {
        assertFalse(pair.initiator.ch.isOpen(), "initiator closed after the Terminate");
        assertFalse(pair.responder.ch.isOpen(), "responder closed after sending the Terminate");
        assertEquals(QpState.ERROR, pair.initiator.qp.state());
        Completion c;
        boolean sawStatus = false;
        while ((c = pair.initiator.sendCq.poll()) != null) {
            if (!c.isSuccess()) {
                assertEquals(initiatorStatus, c.status(), c::toString);
                sawStatus = true;
            }
        }
        assertTrue(sawStatus, "an outstanding request completed with " + initiatorStatus);
        Completion r = pair.responder.recvCq.poll();
        assertNotNull(r);
        assertEquals(WcStatus.WR_FLUSH_ERR, r.status(), "the responder's posted receive is flushed");
    }

    /** The ULPDU a framing would deliver for {@code segment} (header and payload); releases the segment. */
    static ByteBuf ulpdu(DdpSegment segment) {
        ByteBuf b = Unpooled.buffer(segment.headerLength() + segment.payloadLength());
        segment.encodeHeader(b);
        b.writeBytes(segment.content(), segment.content().readerIndex(), segment.payloadLength());
        segment.release();
        return b;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            // case,            layer, etype, code
            "unknown STag,      1, 1, 0x00",
            "STag of other PD,  1, 1, 0x00", // as unknown: no oracle (RFC 5042)
            "out of bounds,     1, 1, 0x01",
            "no remote write,   0, 1, 0x02",
            "invalidated STag,  1, 1, 0x00",
    })
    void badRdmaWriteIsTerminatedWithTheRightCode(String what, int layer, int etype, int code) {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        ByteBuf target = regions.guarded(b, 256);
        MemoryRegion mr;
        int stag;
        long to;
        switch (what) {
            case "STag of other PD":
                mr = b.device.allocPd().register(target, Access.REMOTE_WRITE);
                stag = mr.stag();
                to = mr.iova();
                break;
            case "no remote write":
                mr = b.register(target, Access.REMOTE_READ);
                stag = mr.stag();
                to = mr.iova();
                break;
            default:
                mr = b.register(target, Access.REMOTE_WRITE);
                stag = what.equals("unknown STag") ? mr.stag() ^ 0x100 : mr.stag();
                to = what.equals("out of bounds") ? mr.iova() + 200 : mr.iova();
                if (what.equals("invalidated STag")) {
                    mr.invalidate();
                }
        }
        MemoryRegion src = a.register(a.buffer(100, 0x77), Access.LOCAL_WRITE);
        MemoryRegion sink = armRead(a, b);
        a.qp.postSend(SendRequest.rdmaWrite(1, src.all(), stag, to));
        a.qp.postSend(SendRequest.rdmaRead(2, sink.all(), stag, to));
        pair.pump();
        TerminateMessage t = terminateSentBy(b);
        assertEquals(new TerminateCause(layer, etype, code), t.cause(), t.describe());
        assertTrue(t.m() && t.d(), "M and D: segment length and DDP header included");
        assertFalse(t.r());
        byte[] header = t.terminatedDdpHeader();
        assertEquals(DdpTaggedSegment.HEADER_LENGTH, header.length);
        assertEquals((byte) 0xC1, header[0], "the offending Write's header");
        regions.assertUntouched(target);
        Completion w = next(a.sendCq);
        assertEquals(1, w.wrId());
        assertTrue(w.isSuccess(), "a Write completes locally when sent");
        assertClosedWithFlush(layer == 0 || etype == 1 ? WcStatus.REM_ACCESS_ERR : WcStatus.REM_OP_ERR);
    }

    @Test
    void badReadRequestSourceIsTerminatedWithRdmapProtectionErrorAndItsHeaders() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion noRead = b.register(b.buffer(64, 1), Access.REMOTE_WRITE);
        MemoryRegion sink = armRead(a, b);
        a.qp.postSend(SendRequest.rdmaRead(3, sink.all(), noRead.stag(), noRead.iova()));
        pair.pump();
        TerminateMessage t = terminateSentBy(b);
        assertEquals(new TerminateCause(0, 1, 0x02), t.cause(), "access rights violation");
        assertTrue(t.m() && t.d() && t.r(), "Read Request errors carry both headers (RFC 5040 §4.7)");
        ReadRequestHeader h = t.terminatedRdmaHeader();
        assertEquals(noRead.stag(), h.sourceStag());
        assertEquals(sink.stag(), h.sinkStag());
        assertEquals(8, h.size());
        assertClosedWithFlush(WcStatus.REM_ACCESS_ERR);
    }

    @ParameterizedTest(name = "too long: {0}")
    @CsvSource({"false", "true"})
    void sendWithoutPostedReceiveAndSendTooLong(boolean tooLong) {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion src = a.register(a.buffer(64, 3), Access.LOCAL_WRITE);
        MemoryRegion sink = a.register(a.buffer(8, 0), Access.LOCAL_WRITE);
        MemoryRegion remote = b.register(b.buffer(8, 0), Access.REMOTE_READ);
        ByteBuf recvBuf = regions.guarded(b, 32);
        if (tooLong) {
            b.qp.postRecv(RecvRequest.of(1, b.register(recvBuf, Access.LOCAL_WRITE).all()));
        }
        a.qp.postSend(SendRequest.send(1, src.all()));
        a.qp.postSend(SendRequest.rdmaRead(2, sink.all(), remote.stag(), remote.iova()));
        pair.pump();
        TerminateMessage t = terminateSentBy(b);
        assertEquals(new TerminateCause(1, 2, tooLong ? 0x05 : 0x02), t.cause(), t.describe());
        assertTrue(t.m() && t.d());
        assertEquals(DdpUntaggedSegment.HEADER_LENGTH, t.terminatedDdpHeader().length);
        regions.assertUntouched(recvBuf);
        assertFalse(a.ch.isOpen());
        assertTrue(next(a.sendCq).isSuccess());
        assertEquals(WcStatus.REM_INV_REQ_ERR, next(a.sendCq).status());
        if (tooLong) {
            assertEquals(WcStatus.WR_FLUSH_ERR, next(b.recvCq).status());
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            // case,                 layer, etype, code, header included
            "unknown opcode 0xC,     0, 2, 0x06, false",
            "DDP version 2,          1, 2, 0x06, false",
            "RDMAP version 2,        0, 2, 0x05, false",
            "invalid QN 5,           1, 2, 0x01, true",
            "MSN out of range,       1, 2, 0x03, true",
    })
    void malformedUntaggedSegments(String what, int layer, int etype, int code, boolean header) {
        pair = new EnginePair();
        MemoryRegion recv = pair.responder.register(pair.responder.buffer(64, 0), Access.LOCAL_WRITE);
        pair.responder.qp.postRecv(RecvRequest.of(1, recv.all()));
        int ddpVersion = what.startsWith("DDP") ? 2 : 1;
        int control = (what.startsWith("RDMAP") ? 0x80 : 0x40) | (what.startsWith("unknown") ? 0x0C : 0x03);
        int qn = what.startsWith("invalid QN") ? 5 : 0;
        int msn = what.startsWith("MSN") ? 7 : 1;
        pair.responder.ch.writeInbound(ulpdu(new DdpUntaggedSegment(true, ddpVersion, control, 0, qn, msn, 0,
                Unpooled.wrappedBuffer(new byte[4]))));
        pair.pump();
        TerminateMessage t = terminateSentBy(pair.responder);
        assertEquals(new TerminateCause(layer, etype, code), t.cause(), t.describe());
        assertEquals(header, t.d(), "DDP header copied only when its layout is known");
        if (header) {
            byte[] h = t.terminatedDdpHeader();
            assertEquals(qn, h[9]);
            assertEquals(msn, h[13]);
        }
        assertFalse(pair.responder.ch.isOpen());
        assertEquals(WcStatus.WR_FLUSH_ERR, next(pair.responder.recvCq).status());
    }

    @Test
    void ulpduShorterThanItsDdpHeaderIsALocalDdpError() {
        pair = new EnginePair();
        pair.responder.ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {(byte) 0xC1, 0x40, 0, 0, 0, 1}));
        pair.pump();
        TerminateMessage t = terminateSentBy(pair.responder);
        assertEquals(new TerminateCause(1, 0, 0x00), t.cause(), "DDP local catastrophic error (RFC 5041 §7.2)");
        assertFalse(t.m() || t.d() || t.r());
        assertFalse(pair.responder.ch.isOpen());
    }

    @Test
    void readRequestsBeyondIrdAreTerminated() {
        pair = new EnginePair(p -> p, p -> p.ird(1));
        assertEquals(1, pair.responder.qp.connectionParameters().ird());
        MemoryRegion src = pair.responder.register(pair.responder.buffer(64, 9), Access.REMOTE_READ);
        ByteBuf[] requests = new ByteBuf[2];
        for (int msn = 1; msn <= 2; msn++) {
            ByteBuf hdr = Unpooled.buffer(28);
            new ReadRequestHeader(0x1234, 0, 64, src.stag(), src.iova()).encode(hdr);
            requests[msn - 1] = ulpdu(new DdpUntaggedSegment(true, 0x41, 0, 1, msn, 0, hdr));
        }
        // two Read Requests in one read batch: the first response is not yet written when the second arrives
        pair.responder.ch.writeInbound((Object[]) requests);
        TerminateMessage t = terminateSentBy(pair.responder);
        assertEquals(new TerminateCause(0, 2, 0x07), t.cause(), "beyond IRD, as siw reports it");
        assertFalse(pair.responder.ch.isOpen());
    }

    @ParameterizedTest(name = "limit {0}, Read of {1}")
    @CsvSource({"64, 64, true", "64, 65, false", "0, 4096, true"})
    void readRequestsLargerThanTheDeviceServesAreTerminated(int limit, int size, boolean served) {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        b.device.setMaxReadSize(limit);
        MemoryRegion src = b.register(b.buffer(4096, 0x5C), Access.REMOTE_READ);
        MemoryRegion sink = a.register(a.buffer(4096, 0), Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.rdmaRead(4, sink.slice(0, size), src.stag(), src.iova()));
        pair.pump();
        Completion c = next(a.sendCq);
        if (served) {
            assertTrue(c.isSuccess(), c::toString);
            assertEquals(0x5C, sink.memory().getByte(size - 1));
            return;
        }
        TerminateMessage t = terminateSentBy(b);
        assertEquals(new TerminateCause(0, 2, 0x07), t.cause(),
                "RFC 5040 §7.2 Remote Operation: catastrophic error localized to the stream");
        assertTrue(t.m() && t.d() && !t.r(), "segment length and DDP header (RFC 5040 §4.7, Remote Operation)");
        assertEquals(WcStatus.REM_OP_ERR, c.status());
        assertEquals(0, sink.memory().getByte(0), "nothing read");
    }

    @Test
    void incomingTerminateMovesToErrorAndCompletesOutstandingWork() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        MemoryRegion sink = a.register(a.buffer(8, 0), Access.LOCAL_WRITE);
        MemoryRegion recv = a.register(a.buffer(8, 0), Access.LOCAL_WRITE);
        a.qp.postRecv(RecvRequest.of(5, recv.all()));
        // a Read the responder never answers: its Read Request is dropped, the responder's Terminate follows
        a.qp.postSend(SendRequest.rdmaRead(6, sink.all(), 0x4242, 0));
        a.drainUlpdus().forEach(ByteBuf::release);
        TerminateMessage tm = TerminateMessage.forError(new TerminateCause(0, 2, 0x08), (DdpUntaggedSegment) null, null);
        a.ch.writeInbound(ulpdu(tm.toSegment(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT)));
        pair.pump();
        assertEquals(QpState.ERROR, a.qp.state());
        assertFalse(a.ch.isOpen());
        assertEquals(tm, a.qp.peerTerminate(), "the peer's Terminate is kept for the application");
        assertNull(pair.responder.qp.peerTerminate());
        Completion read = next(a.sendCq);
        assertEquals(6, read.wrId());
        assertEquals(WcStatus.REM_OP_ERR, read.status());
        assertTrue(read.detail().contains("Terminate"), read.detail());
        assertEquals(WcStatus.WR_FLUSH_ERR, next(a.recvCq).status());
    }
}
