package dev.iwarp.bootstrap;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.mpa.RtrType;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.rdmap.engine.RdmaEngine;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.LoggerFactory;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The RDMA core over MPA through the MPA adapter, in memory: data over every CRC and marker
 * combination, MPA errors turned into Layer 2 Terminates, the RFC 6581 RTR negotiated by MPA, and an
 * MPA Rev 0 stream whose every message (the Terminate included) carries DDP/RDMAP version 0.
 */
class MpaEngineTest {
    private MpaEnginePair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    private static Completion next(dev.iwarp.verbs.CompletionQueue cq) {
        Completion c = cq.poll();
        assertNotNull(c, "a completion");
        return c;
    }

    private static byte[] bytes(ByteBuf b, int index, int length) {
        byte[] a = new byte[length];
        b.getBytes(index, a);
        return a;
    }

    /**
     * With and without a tap on the engine's writer, over every CRC and marker combination, every operation
     * below runs with the data checked; the framer hands its ULPDUs to the engine.
     */
    @ParameterizedTest(name = "crc={0} markers initiator={1} responder={2} tap={3}")
    @CsvSource({"true,false,false,true", "false,false,false,true", "true,true,true,true", "true,true,false,true",
            "false,false,true,true", "true,false,false,false", "false,false,false,false", "true,true,false,false"})
    void writeReadAndSendOverEveryCrcAndMarkerCombination(boolean crc, boolean markersI, boolean markersR,
                                                          boolean tap) {
        pair = new MpaEnginePair(MpaSettings.builder().crc(crc).markers(markersI).build(),
                MpaSettings.builder().crc(false).markers(markersR).acceptMarkers(true).build(), tap);
        MpaEnginePair.Side a = pair.initiator;
        MpaEnginePair.Side b = pair.responder;
        MpaParameters mpa = a.qp.connectionParameters().framing(MpaParameters.class);
        assertEquals(crc, mpa.crc());
        assertEquals(markersR, mpa.markersTx());
        int mulpdu = a.qp.connectionParameters().mulpdu();
        assertEquals(mpa.mulpdu(), mulpdu, "MULPDU comes from the framer");
        long wr = 0;
        for (int size : new int[] {0, 1, mulpdu - 1, mulpdu, mulpdu + 1, 256 * 1024}) {
            ByteBuf src = a.buffer(Math.max(size, 1), size & 0x7F);
            MemoryRegion srcMr = a.register(src, Access.LOCAL_WRITE);
            ByteBuf dst = b.buffer(Math.max(size, 1), 0);
            MemoryRegion dstMr = b.register(dst, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
            a.qp.postSend(SendRequest.rdmaWrite(++wr, srcMr.slice(0, size), dstMr.stag(), dstMr.iova()));
            pair.pump();
            assertTrue(next(a.sendCq).isSuccess());
            assertArrayEquals(bytes(src, 0, size), bytes(dst, 0, size), "Write of " + size);

            dst.setByte(0, 0x55);
            ByteBuf sink = a.buffer(Math.max(size, 1), 0);
            MemoryRegion sinkMr = a.register(sink, Access.LOCAL_WRITE);
            a.qp.postSend(SendRequest.rdmaRead(++wr, sinkMr.slice(0, size), dstMr.stag(), dstMr.iova()));
            pair.pump();
            assertTrue(next(a.sendCq).isSuccess());
            assertArrayEquals(bytes(dst, 0, size), bytes(sink, 0, size), "Read of " + size);

            ByteBuf recv = a.buffer(Math.max(size, 1), 0);
            a.qp.postRecv(RecvRequest.of(size, a.register(recv, Access.LOCAL_WRITE).slice(0, size)));
            b.qp.postSend(SendRequest.send(++wr, dstMr.slice(0, size)));
            pair.pump();
            assertTrue(next(b.sendCq).isSuccess());
            assertEquals(size, next(a.recvCq).byteLength());
            assertArrayEquals(bytes(dst, 0, size), bytes(recv, 0, size), "Send of " + size);
        }
        assertTrue(!tap || a.written.size() > 6 * 3, "the tap saw the segments");
        for (MpaEnginePair.DdpHeader h : a.written) {
            assertTrue(h.headerLength + h.payloadLength <= mulpdu, "every segment fits MULPDU");
        }
    }

    @Test
    void anInboundHandlerBelowTheAdapterKeepsUlpdusAsSlicesAndEveryOperationStillWorks() {
        pair = new MpaEnginePair(MpaSettings.defaults(), MpaSettings.defaults(), false, true);
        MpaEnginePair.Side a = pair.initiator;
        MpaEnginePair.Side b = pair.responder;
        int size = 100_000;
        ByteBuf src = a.buffer(size, 0x3C);
        MemoryRegion srcMr = a.register(src, Access.LOCAL_WRITE);
        ByteBuf dst = b.buffer(size, 0);
        MemoryRegion dstMr = b.register(dst, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        a.qp.postSend(SendRequest.rdmaWrite(1, srcMr.slice(0, size), dstMr.stag(), dstMr.iova()));
        pair.pump();
        assertTrue(next(a.sendCq).isSuccess());
        assertArrayEquals(bytes(src, 0, size), bytes(dst, 0, size));
        dst.setByte(7, 0x55);
        ByteBuf sink = a.buffer(size, 0);
        a.qp.postSend(SendRequest.rdmaRead(2, a.register(sink, Access.LOCAL_WRITE).slice(0, size), dstMr.stag(),
                dstMr.iova()));
        pair.pump();
        assertTrue(next(a.sendCq).isSuccess());
        assertArrayEquals(bytes(dst, 0, size), bytes(sink, 0, size));
    }

    /** A zero-length RDMA Write from the Initiator: the Responder has then received an FPDU (rule 4). */
    private void releaseResponderHold() {
        MemoryRegion none = pair.initiator.register(pair.initiator.buffer(1, 0), Access.LOCAL_WRITE);
        pair.initiator.qp.postSend(SendRequest.rdmaWrite(-1, none.slice(0, 0), 1, 0));
        pair.pump();
        assertTrue(pair.initiator.sendCq.poll().isSuccess());
    }

    /** An FPDU whose CRC field is wrong: ULPDU_Length 20 (an untagged Send header and 2 octets of payload). */
    private static ByteBuf fpduWithBadCrc() {
        return Unpooled.buffer().writeShort(20).writeBytes(new byte[] {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 2, 0, 0, 0, 0, 9, 9}).writeShort(0).writeInt(0x12345678);
    }

    @Test
    void mpaCrcErrorIsTerminatedAsLayer2OnTheWire() {
        pair = new MpaEnginePair(MpaSettings.defaults(), MpaSettings.defaults());
        assertTrue(pair.responder.qp.connectionParameters().framing(MpaParameters.class).crc());
        releaseResponderHold();
        MemoryRegion recv = pair.responder.register(pair.responder.buffer(64, 0), Access.LOCAL_WRITE);
        pair.responder.qp.postRecv(RecvRequest.of(1, recv.all()));
        pair.fromResponder.reset();
        pair.responder.ch.writeInbound(fpduWithBadCrc());
        pair.pump();
        // exactly one FPDU left the Responder: the Terminate, with a valid CRC
        byte[] wire = pair.fromResponder.toByteArray();
        int ulpduLength = (wire[0] & 0xFF) << 8 | wire[1] & 0xFF;
        int pad = (-(2 + ulpduLength)) & 3;
        assertEquals(2 + ulpduLength + pad + 4, wire.length, "one FPDU");
        CRC32C crc = new CRC32C();
        crc.update(wire, 0, wire.length - 4);
        assertEquals((int) crc.getValue(), Unpooled.wrappedBuffer(wire).getIntLE(wire.length - 4));
        assertArrayEquals(new byte[] {0x41, 0x47, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0},
                Arrays.copyOfRange(wire, 2, 20), "untagged, last, RDMAP Terminate, QN 2, MSN 1, MO 0");
        TerminateMessage t = TerminateMessage.decode(Unpooled.wrappedBuffer(wire, 20, ulpduLength - 18));
        assertEquals(new TerminateCause(2, 0, 0x02), t.cause(), "Layer LLP, EType MPA, CRC error");
        assertFalse(t.m() || t.d() || t.r(), "no header: it is not trustworthy (RFC 5040 §7)");
        assertFalse(pair.responder.ch.isOpen());
        assertEquals(WcStatus.WR_FLUSH_ERR, next(pair.responder.recvCq).status());
        assertEquals(QpState.ERROR, pair.initiator.qp.state());
        assertEquals(t, pair.initiator.qp.peerTerminate());
    }

    @Test
    void crcErrorInTheResponderFirstFpduClosesWithoutATerminateAndSaysSo() {
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        Logger logger = (Logger) LoggerFactory.getLogger(RdmaEngine.class);
        log.start();
        logger.addAppender(log);
        try {
            pair = new MpaEnginePair(MpaSettings.defaults(), MpaSettings.defaults());
            pair.responder.ch.writeInbound(fpduWithBadCrc());
            pair.pump();
            assertEquals(0, pair.fromResponder.size(), "RFC 5044 §7.1.2 rule 4: nothing leaves, only the FIN");
            assertFalse(pair.responder.ch.isOpen());
            List<String> lines = log.list.stream().map(ILoggingEvent::getFormattedMessage).collect(Collectors.toList());
            assertEquals(1, lines.size(), lines::toString);
            assertTrue(lines.get(0).contains("closing without Terminate 2/0/0x02: no valid FPDU received yet "
                    + "(RFC 5044 §7.1.2 rule 4)"), lines.get(0));
        } finally {
            logger.detachAppender(log);
        }
    }

    @ParameterizedTest(name = "RTR {0}")
    @CsvSource({"WRITE, 0", "READ, 1", "SEND, 3"})
    void peerToPeerRtrNegotiatedByMpaIsSentAndConsumed(RtrType rtr, int opcode) {
        pair = new MpaEnginePair(MpaSettings.builder().peerToPeer(true)
                .rtrTypes(RtrType.SEND, RtrType.WRITE, RtrType.READ).build(),
                MpaSettings.builder().rtrTypes(rtr).build());
        assertEquals(rtr.name(), pair.initiator.qp.connectionParameters().rtr().name());
        assertEquals(opcode, pair.initiator.written.get(0).opcode(), "the RTR is the Initiator's first message");
        assertTrue(pair.responder.qp.established().isSuccess(), "established once the RTR arrived");
        MemoryRegion recv = pair.initiator.register(pair.initiator.buffer(16, 0), Access.LOCAL_WRITE);
        pair.initiator.qp.postRecv(RecvRequest.of(1, recv.all()));
        MemoryRegion src = pair.responder.register(pair.responder.buffer(16, 0x31), Access.LOCAL_WRITE);
        pair.responder.qp.postSend(SendRequest.send(2, src.all()));
        pair.pump();
        assertEquals(16, next(pair.initiator.recvCq).byteLength());
        assertTrue(pair.initiator.sendCq.poll() == null, "the RTR completes nowhere");
    }

    @Test
    void rev0StreamCarriesVersion0InTheDataAndInTheTerminate() {
        pair = new MpaEnginePair(MpaSettings.builder().revision(0).crc(true).build(),
                MpaSettings.builder().revision(0).minRevision(0).build());
        MpaEnginePair.Side a = pair.initiator;
        MpaEnginePair.Side b = pair.responder;
        assertEquals(0, a.qp.connectionParameters().ddpVersion(), "RFC 5044 Appendix C: Rev 0 is the RDMAC version");
        MemoryRegion dst = b.register(b.buffer(64, 0), Access.REMOTE_WRITE);
        MemoryRegion src = a.register(a.buffer(64, 7), Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.rdmaWrite(1, src.all(), dst.stag(), dst.iova()));
        pair.pump();
        assertTrue(next(a.sendCq).isSuccess());
        assertEquals(0, a.lastWritten().ddpVersion());
        assertEquals(0, a.lastWritten().rdmapVersion());
        pair.fromResponder.reset();
        a.qp.postSend(SendRequest.rdmaWrite(2, src.all(), dst.stag() ^ 0x100, dst.iova()));
        pair.pump();
        MpaEnginePair.DdpHeader t = b.lastWritten();
        assertEquals(7, t.opcode());
        assertEquals(0, t.ddpVersion(), "the Terminate goes out with DDP version 0 like the data");
        assertEquals(0, t.rdmapVersion(), "and RDMAP version 0");
        byte[] wire = pair.fromResponder.toByteArray();
        assertEquals(0x40, wire[2] & 0xFF, "on the wire: untagged, last, DV 0");
        assertEquals(0x07, wire[3] & 0xFF, "RV 0, OpCode Terminate");
        assertEquals(new TerminateCause(1, 1, 0x00), TerminateMessage.decode(Unpooled.wrappedBuffer(t.payload)).cause());
        assertEquals(QpState.ERROR, a.qp.state(), "the Rev 0 peer took it as a Terminate");
        assertEquals(new TerminateCause(1, 1, 0x00), a.qp.peerTerminate().cause());
    }
}
