package dev.iwarp.rdmap.engine;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.llp.LlpException;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.WriteBufferWaterMark;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.stream.Collectors;

import static dev.iwarp.rdmap.engine.RdmaEngineErrorsTest.ulpdu;
import static dev.iwarp.rdmap.engine.RdmaEngineOperationsTest.next;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The stream as a whole over the lower-layer contract: LLP errors, the stream's version on every
 * message including the Terminate, a lower layer that cannot transmit, startup failure, and transmit
 * backpressure.
 */
class RdmaEngineStreamTest extends EnginePairTest {
    @Test
    void llpCrcErrorIsTerminatedAsLayer2WithoutHeaders() {
        pair = new EnginePair();
        MemoryRegion recv = pair.responder.register(pair.responder.buffer(64, 0), Access.LOCAL_WRITE);
        pair.responder.qp.postRecv(RecvRequest.of(1, recv.all()));
        pair.responder.llp.raise(new LlpException(0, 0x02, true, "FPDU CRC mismatch", null));
        pair.pump();
        TerminateMessage t = RdmaEngineErrorsTest.terminateSentBy(pair.responder);
        assertEquals(new TerminateCause(2, 0, 0x02), t.cause(), "Layer LLP, EType 0, code 2");
        assertFalse(t.m() || t.d() || t.r(), "no header: it is not trustworthy (RFC 5040 §7)");
        assertFalse(pair.responder.ch.isOpen());
        assertEquals(WcStatus.WR_FLUSH_ERR, next(pair.responder.recvCq).status());
        assertEquals(QpState.ERROR, pair.initiator.qp.state());
        assertEquals(WcStatus.FATAL_ERR, RdmapStream.statusFor(pair.initiator.qp.peerTerminate().cause()));
    }

    @Test
    void llpErrorThatCannotCarryATerminateClosesAtOnce() {
        pair = new EnginePair();
        int before = pair.responder.written.size();
        pair.responder.llp.raise(new LlpException(0, 0x01, false, "connection lost inside a frame", null));
        pair.pump();
        assertEquals(before, pair.responder.written.size(), "no Terminate");
        assertFalse(pair.responder.ch.isOpen());
        assertEquals(QpState.ERROR, pair.responder.qp.state());
    }

    @Test
    void rdmacStreamSendsEveryMessageAndTheTerminateWithVersion0() {
        pair = new EnginePair(p -> p.version(0), p -> p.version(0));
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        ByteBuf dst = regions.guarded(b, 64);
        MemoryRegion dstMr = b.register(dst, Access.REMOTE_WRITE);
        MemoryRegion src = a.register(a.buffer(64, 0x12), Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.rdmaWrite(1, src.all(), dstMr.stag(), dstMr.iova()));
        pair.pump();
        assertTrue(next(a.sendCq).isSuccess());
        assertArrayEquals(Regions.bytes(src.memory(), 0, 64), Regions.bytes(dst, 0, 64));
        EngineSide.Recorded write = a.lastWritten();
        assertEquals(0, write.ddpVersion(), "DV 0 (RFC 5044 Appendix C)");
        assertEquals(0x00, write.rsvdUlp, "RV 0, RDMA Write");
        // a Write to an unknown STag: the Terminate goes out in version 0 like the data
        a.qp.postSend(SendRequest.rdmaWrite(2, src.all(), dstMr.stag() ^ 0x100, dstMr.iova()));
        pair.pump();
        EngineSide.Recorded t = b.lastWritten();
        assertEquals(7, t.opcode());
        assertArrayEquals(new byte[] {0x40, 0x07, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0}, t.header,
                "untagged, last, DV 0; RV 0 Terminate; QN 2, MSN 1, MO 0");
        assertEquals(new TerminateCause(1, 1, 0x00), TerminateMessage.decode(Unpooled.wrappedBuffer(t.payload)).cause());
        assertEquals(QpState.ERROR, a.qp.state(), "the version-0 peer accepted the Terminate as its own");
        regions.assertCanaries(dst);
    }

    @Test
    void versionMismatchWithAnRdmacStreamIsTerminated() {
        pair = new EnginePair(p -> p, p -> p.version(0));
        MemoryRegion dst = pair.responder.register(pair.responder.buffer(8, 0), Access.REMOTE_WRITE);
        MemoryRegion src = pair.initiator.register(pair.initiator.buffer(8, 1), Access.LOCAL_WRITE);
        pair.initiator.qp.postSend(SendRequest.rdmaWrite(1, src.all(), dst.stag(), dst.iova()));
        pair.pump();
        EngineSide.Recorded t = pair.responder.lastWritten();
        assertEquals(new TerminateCause(1, 1, 0x04),
                TerminateMessage.decode(Unpooled.wrappedBuffer(t.payload)).cause(), "tagged DDP version error");
    }

    @Test
    void whenTheLowerLayerHoldsTransmitNoTerminateIsClaimed() {
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        Logger logger = (Logger) LoggerFactory.getLogger(RdmaEngine.class);
        log.start();
        logger.addAppender(log);
        try {
            EngineSide b = new EngineSide(LlpRole.RESPONDER);
            try {
                b.establish(b.parameters().build());
                b.llp.holdReason = "no valid FPDU received yet (RFC 5044 §7.1.2)";
                b.llp.raise(new LlpException(0, 0x02, true, "FPDU CRC mismatch", null));
                b.ch.runPendingTasks();
                assertTrue(b.written.isEmpty(), "no Terminate handed down");
                assertFalse(b.ch.isOpen());
                List<String> lines = log.list.stream().map(ILoggingEvent::getFormattedMessage)
                        .collect(Collectors.toList());
                assertEquals(1, lines.size(), lines::toString);
                assertTrue(lines.get(0).contains("closing without Terminate 2/0/0x02: no valid FPDU received yet"),
                        lines.get(0));
                assertFalse(lines.get(0).contains("sending Terminate"), lines.get(0));
            } finally {
                b.close();
            }
        } finally {
            logger.detachAppender(log);
        }
    }

    @Test
    void startupFailureFlushesWhatWasPosted() {
        EngineSide a = new EngineSide(LlpRole.INITIATOR);
        try {
            MemoryRegion mr = a.register(a.buffer(8, 0), Access.LOCAL_WRITE);
            a.qp.postRecv(RecvRequest.of(1, mr.all()));
            a.qp.postSend(SendRequest.send(2, mr.all()));
            a.llp.fail(new IllegalStateException("rejected"));
            assertEquals(WcStatus.WR_FLUSH_ERR, next(a.recvCq).status());
            assertEquals(WcStatus.WR_FLUSH_ERR, next(a.sendCq).status());
            assertTrue(a.qp.established().isDone() && !a.qp.established().isSuccess());
            assertEquals(QpState.ERROR, a.qp.state());
        } finally {
            a.close();
        }
    }

    @Test
    void transmitStopsWhenTheChannelIsNotWritableAndResumes() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        a.ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(16 * 1024, 32 * 1024));
        int size = 4 << 20;
        ByteBuf src = a.buffer(size, 0);
        Regions.fillPattern(src, 3);
        MemoryRegion srcMr = a.register(src, Access.LOCAL_WRITE);
        ByteBuf dst = regions.guarded(b, size);
        MemoryRegion dstMr = b.register(dst, Access.REMOTE_WRITE);
        a.llp.stall(); // the peer stops reading: nothing leaves
        a.qp.postSend(SendRequest.rdmaWrite(1, srcMr.all(), dstMr.stag(), dstMr.iova()));
        a.ch.runPendingTasks();
        int mulpdu = a.qp.connectionParameters().mulpdu();
        assertFalse(a.ch.isWritable());
        assertTrue(a.llp.stalledBytes() <= 32 * 1024 + mulpdu, "at most the high-water mark plus one segment: "
                + a.llp.stalledBytes());
        assertTrue(a.written.size() <= 32 * 1024 / (mulpdu - DdpTaggedSegment.HEADER_LENGTH) + 1,
                "segments are cut only while writable: " + a.written.size());
        assertTrue(a.sendCq.poll() == null, "not complete while stalled");
        for (int round = 0; round < 10_000 && a.sendCq.size() == 0; round++) {
            a.llp.unstall(); // the peer reads what is in flight, then stops again
            a.llp.stall();
            pair.pump();
        }
        a.llp.unstall();
        pair.pump();
        assertTrue(next(a.sendCq).isSuccess());
        assertArrayEquals(Regions.bytes(src, 0, size), Regions.bytes(dst, 0, size));
        regions.assertCanaries(dst);
    }
}
