package dev.iwarp.verbs;

import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.mpa.RtrType;
import dev.iwarp.rdmap.ReadRequestHeader;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The RDMAP engine between two in-memory pipelines: every operation at the sizes that matter, with
 * data checked octet for octet, and every error path with the exact Terminate on the wire, the
 * completion statuses on both sides, and canaries proving nothing was placed outside a region.
 */
class RdmaEngineTest {
    private static final int CANARY = 0xEE;

    private static void fillPattern(ByteBuf b, int seed) {
        byte[] a = new byte[b.capacity()];
        for (int i = 0; i < a.length; i++) {
            a[i] = (byte) (i * 31 + seed);
        }
        b.setBytes(0, a); // one access: the paranoid leak detector records every access
    }

    private static byte[] bytes(ByteBuf b, int index, int len) {
        byte[] a = new byte[len];
        b.getBytes(index, a);
        return a;
    }

    /** Regions made by {@link #guarded} and the buffers around them. */
    private final java.util.Map<ByteBuf, ByteBuf> guards = new java.util.IdentityHashMap<>();

    /** A region of {@code size} octets inside a buffer with 32 canary octets on each side. */
    private ByteBuf guarded(RdmaPair.Side side, int size) {
        ByteBuf whole = side.buffer(size + 64, CANARY);
        ByteBuf region = whole.slice(32, size);
        guards.put(region, whole);
        return region;
    }

    private void assertCanaries(ByteBuf region) {
        ByteBuf whole = guards.get(region);
        byte[] before = bytes(whole, 0, 32);
        byte[] after = bytes(whole, 32 + region.capacity(), 32);
        for (int i = 0; i < 32; i++) {
            assertEquals((byte) CANARY, before[i], "octet before the region at " + i);
            assertEquals((byte) CANARY, after[i], "octet after the region at " + i);
        }
    }

    private static int[] sizes(RdmaPair pair, boolean big) {
        int mulpdu = pair.initiator.qp.mpaParameters().mulpdu();
        List<Integer> s = new ArrayList<>(List.of(0, 1, mulpdu - 1, mulpdu, mulpdu + 1, 1 << 20));
        if (big) {
            s.add(16 << 20);
        }
        return s.stream().mapToInt(Integer::intValue).toArray();
    }

    private static Completion next(CompletionQueue cq) {
        Completion c = cq.poll();
        assertNotNull(c, "a completion");
        return c;
    }

    @ParameterizedTest(name = "crc={0} markers initiator={1} responder={2} 16MiB={3}")
    @CsvSource({"true,false,false,true", "false,false,false,false", "true,true,true,false", "true,true,false,false",
            "false,false,true,false"})
    void writeReadAndSendAtEverySize(boolean crc, boolean markersI, boolean markersR, boolean big) {
        RdmaPair pair = new RdmaPair(MpaSettings.builder().crc(crc).markers(markersI).build(),
                MpaSettings.builder().crc(false).markers(markersR).build());
        RdmaPair.Side a = pair.initiator;
        RdmaPair.Side b = pair.responder;
        assertEquals(QpState.RTS, a.qp.state());
        assertEquals(QpState.RTS, b.qp.state());
        assertEquals(crc, a.qp.mpaParameters().crc());
        long wr = 0;
        for (int size : sizes(pair, big)) {
            // RDMA Write a -> b
            ByteBuf src = a.buffer(Math.max(size, 1), 0);
            fillPattern(src, size);
            MemoryRegion srcMr = a.register(src, Access.LOCAL_WRITE);
            ByteBuf dst = guarded(b, Math.max(size, 1));
            MemoryRegion dstMr = b.register(dst, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
            a.qp.postSend(SendRequest.rdmaWrite(++wr, srcMr.slice(0, size), dstMr.stag(), dstMr.iova()));
            pair.pump();
            Completion c = next(a.sendCq);
            assertTrue(c.isSuccess(), c::toString);
            assertEquals(WcOpcode.RDMA_WRITE, c.opcode());
            assertEquals(wr, c.wrId());
            assertArrayEquals(bytes(src, 0, size), bytes(dst, 0, size), "Write of " + size);
            assertCanaries(dst);

            // RDMA Read a <- b (reads back what b holds, after b changes it)
            fillPattern(dst, size + 7);
            ByteBuf sink = guarded(a, Math.max(size, 1));
            MemoryRegion sinkMr = a.register(sink, Access.LOCAL_WRITE);
            a.qp.postSend(SendRequest.rdmaRead(++wr, sinkMr.slice(0, size), dstMr.stag(), dstMr.iova()));
            pair.pump();
            c = next(a.sendCq);
            assertTrue(c.isSuccess(), c::toString);
            assertEquals(WcOpcode.RDMA_READ, c.opcode());
            assertEquals(size, c.byteLength());
            assertArrayEquals(bytes(dst, 0, size), bytes(sink, 0, size), "Read of " + size);
            assertCanaries(sink);

            // Send b -> a into a posted receive
            ByteBuf recv = guarded(a, Math.max(size, 1));
            MemoryRegion recvMr = a.register(recv, Access.LOCAL_WRITE);
            a.qp.postRecv(RecvRequest.of(1000 + size, recvMr.slice(0, size)));
            b.qp.postSend(SendRequest.send(++wr, dstMr.slice(0, size)));
            pair.pump();
            c = next(b.sendCq);
            assertTrue(c.isSuccess(), c::toString);
            Completion r = next(a.recvCq);
            assertTrue(r.isSuccess(), r::toString);
            assertEquals(WcOpcode.RECV, r.opcode());
            assertEquals(size, r.byteLength());
            assertEquals(1000 + size, r.wrId());
            assertArrayEquals(bytes(dst, 0, size), bytes(recv, 0, size), "Send of " + size);
            assertCanaries(recv);
            srcMr.deregister();
            dstMr.deregister();
            sinkMr.deregister();
            recvMr.deregister();
        }
        // every segment on the wire fits MULPDU and no two messages interleave
        int mulpdu = a.qp.mpaParameters().mulpdu();
        for (RdmaPair.Recorded rec : a.written) {
            assertTrue(rec.header.length + rec.payloadLength <= mulpdu);
        }
        assertNull(a.sendCq.poll());
        assertNull(a.recvCq.poll());
        pair.close();
    }

    @Test
    void sendVariantsImmediateDataAndSolicitedEvents() {
        RdmaPair pair = new RdmaPair();
        RdmaPair.Side a = pair.initiator;
        RdmaPair.Side b = pair.responder;
        MemoryRegion srcMr = a.register(a.buffer(64, 0x41), Access.LOCAL_WRITE);
        MemoryRegion recvMr = b.register(b.buffer(256, 0), Access.LOCAL_WRITE);
        MemoryRegion victim = b.register(b.buffer(64, 0), Access.REMOTE_WRITE);
        for (int i = 0; i < 4; i++) {
            b.qp.postRecv(RecvRequest.of(i, recvMr.slice(i * 64, 64)));
        }
        a.qp.postSend(SendRequest.send(1, srcMr.slice(0, 10)).solicited());
        a.qp.postSend(SendRequest.sendWithInvalidate(2, srcMr.slice(0, 20), victim.stag()));
        a.qp.postSend(SendRequest.sendWithInvalidate(3, srcMr.slice(0, 30), victim.stag()).solicited().unsignaled());
        pair.pump();
        Completion r1 = next(b.recvCq);
        assertTrue(r1.solicited());
        assertEquals(10, r1.byteLength());
        Completion r2 = next(b.recvCq);
        assertTrue(r2.hasInvalidatedStag());
        assertEquals(victim.stag(), r2.invalidatedStag());
        assertFalse(victim.isValid(), "RFC 5040 §5.3: invalidated before delivery");
        // the second invalidation of an invalid STag is an error: Terminate 0/2/0x09
        RdmaPair.Recorded t = b.lastWritten();
        assertEquals(7, t.opcode());
        TerminateMessage tm = TerminateMessage.decode(Unpooled.wrappedBuffer(t.payload));
        assertEquals(new TerminateCause(0, 2, 0x09), tm.cause());
        assertEquals(2, a.sendCq.size(), "two signaled Sends completed locally");
        pair.close();
    }

    @Test
    void immediateDataConsumesAReceiveAndCarriesEightOctets() {
        RdmaPair pair = new RdmaPair();
        MemoryRegion recvMr = pair.responder.register(pair.responder.buffer(16, 0), Access.LOCAL_WRITE);
        pair.responder.qp.postRecv(RecvRequest.of(77, recvMr.all()));
        pair.initiator.qp.postSend(SendRequest.immediateData(5, 0x0102030405060708L).solicited());
        pair.pump();
        Completion c = next(pair.responder.recvCq);
        assertEquals(WcOpcode.RECV_IMMEDIATE, c.opcode());
        assertEquals(0x0102030405060708L, c.immediateData());
        assertTrue(c.solicited());
        assertEquals(WcOpcode.IMMEDIATE_DATA, next(pair.initiator.sendCq).opcode());
        assertEquals(0x49, pair.initiator.lastWritten().rsvdUlp, "RDMAP RV 1, opcode 0x9: with SE (RFC 7306)");
        pair.close();
    }

    @Test
    void atomicsFetchAddAndCompareSwapWithMasks() {
        RdmaPair pair = new RdmaPair();
        RdmaPair.Side a = pair.initiator;
        RdmaPair.Side b = pair.responder;
        ByteBuf target = guarded(b, 16);
        target.setLong(0, 0x00000001_FFFFFFFFL);
        target.setLong(8, 0x1111_2222_3333_4444L);
        MemoryRegion t = b.register(target, Access.REMOTE_ATOMIC, Access.REMOTE_READ, Access.REMOTE_WRITE);
        MemoryRegion result = a.register(a.buffer(16, 0), Access.LOCAL_WRITE);
        // two independent 32-bit adders: the carry out of bit 31 stops at the mask bit
        a.qp.postSend(SendRequest.fetchAdd(1, result.slice(0, 8), t.stag(), t.iova(), 0x00000001_00000001L,
                0x80000000_80000000L));
        a.qp.postSend(SendRequest.compareSwap(2, result.slice(8, 8), t.stag(), t.iova() + 8, 0x0000_0000_3333_0000L,
                0x0000_0000_FFFF_0000L, 0xAAAA_0000_0000_0000L, 0xFFFF_0000_0000_0000L));
        pair.pump();
        Completion c1 = next(a.sendCq);
        assertTrue(c1.isSuccess(), c1::toString);
        assertEquals(0x00000001_FFFFFFFFL, c1.immediateData());
        assertEquals(0x00000001_FFFFFFFFL, result.memory().getLong(0));
        assertEquals(0x00000002_00000000L, target.getLong(0));
        Completion c2 = next(a.sendCq);
        assertEquals(WcOpcode.ATOMIC_COMPARE_SWAP, c2.opcode());
        assertEquals(0x1111_2222_3333_4444L, result.memory().getLong(8));
        assertEquals(0xAAAA_2222_3333_4444L, target.getLong(8));
        assertCanaries(target);
        pair.close();
    }

    @Test
    void deepQueuesCompleteInOrderUnderOrd() {
        RdmaPair pair = new RdmaPair(MpaSettings.builder().ord(2).build(), MpaSettings.builder().ird(2).build());
        RdmaPair.Side a = pair.initiator;
        RdmaPair.Side b = pair.responder;
        assertEquals(2, a.qp.mpaParameters().ord());
        MemoryRegion remote = b.register(b.buffer(4096, 0x5A), Access.REMOTE_READ, Access.REMOTE_WRITE);
        MemoryRegion local = a.register(a.buffer(4096, 0), Access.LOCAL_WRITE);
        MemoryRegion recv = b.register(b.buffer(64 * 200, 0), Access.LOCAL_WRITE);
        for (int i = 0; i < 200; i++) {
            b.qp.postRecv(RecvRequest.of(i, recv.slice(i * 64, 64)));
        }
        for (int i = 0; i < 600; i++) {
            switch (i % 3) {
                case 0:
                    a.qp.postSend(SendRequest.rdmaRead(i, local.slice(i % 64 * 64, 64), remote.stag(), remote.iova()));
                    break;
                case 1:
                    a.qp.postSend(SendRequest.rdmaWrite(i, local.slice(0, 64), remote.stag(), remote.iova() + 64));
                    break;
                default:
                    a.qp.postSend(SendRequest.send(i, local.slice(0, 64)));
            }
        }
        pair.pump();
        long expectedWr = 0;
        for (Completion c : a.sendCq.poll(1000)) {
            assertTrue(c.isSuccess(), c::toString);
            assertEquals(expectedWr++, c.wrId(), "completions in submission order");
        }
        assertEquals(600, expectedWr);
        assertEquals(200, b.recvCq.size());
        // no more than ORD Read Requests were ever outstanding: count them between Read Responses
        pair.close();
    }

    // ------------------------------------------------------------------ error paths

    /** Posts a Read that is still outstanding when the peer's Terminate arrives. */
    private MemoryRegion armRead(RdmaPair.Side a, RdmaPair.Side b) {
        MemoryRegion sink = a.register(a.buffer(8, 0), Access.LOCAL_WRITE);
        MemoryRegion recv = b.register(b.buffer(8, 0), Access.LOCAL_WRITE);
        b.qp.postRecv(RecvRequest.of(900, recv.all()));
        return sink;
    }

    private static TerminateMessage terminateSentBy(RdmaPair.Side side) {
        RdmaPair.Recorded t = side.lastWritten();
        assertNotNull(t);
        assertEquals(7, t.opcode(), "last message is a Terminate");
        assertArrayEquals(new byte[] {0x41, 0x47, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0}, t.header,
                "untagged, last, RDMAP Terminate, QN 2, MSN 1, MO 0 (RFC 5040 §5.4)");
        return TerminateMessage.decode(Unpooled.wrappedBuffer(t.payload));
    }

    private static void assertClosedWithFlush(RdmaPair pair, WcStatus initiatorStatus) {
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

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            // case,            layer, etype, code
            "unknown STag,      1, 1, 0x00",
            "STag of other PD,  1, 1, 0x02",
            "out of bounds,     1, 1, 0x01",
            "no remote write,   0, 1, 0x02",
            "invalidated STag,  1, 1, 0x00",
    })
    void badRdmaWriteIsTerminatedWithTheRightCode(String what, int layer, int etype, int code) {
        RdmaPair pair = new RdmaPair();
        RdmaPair.Side a = pair.initiator;
        RdmaPair.Side b = pair.responder;
        ByteBuf target = guarded(b, 256);
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
        byte[] content = bytes(target, 0, target.capacity());
        for (int i = 0; i < content.length; i++) {
            assertEquals((byte) CANARY, content[i], "nothing placed from the refused Write");
        }
        assertCanaries(target);
        Completion w = next(a.sendCq);
        assertEquals(1, w.wrId());
        assertTrue(w.isSuccess(), "a Write completes locally when sent");
        assertClosedWithFlush(pair, layer == 0 || etype == 1 ? WcStatus.REM_ACCESS_ERR : WcStatus.REM_OP_ERR);
        pair.close();
    }

    @Test
    void badReadRequestSourceIsTerminatedWithRdmapProtectionErrorAndItsHeaders() {
        RdmaPair pair = new RdmaPair();
        RdmaPair.Side a = pair.initiator;
        RdmaPair.Side b = pair.responder;
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
        assertClosedWithFlush(pair, WcStatus.REM_ACCESS_ERR);
        pair.close();
    }

    @Test
    void sendWithoutPostedReceiveAndSendTooLong() {
        for (boolean tooLong : new boolean[] {false, true}) {
            RdmaPair pair = new RdmaPair();
            RdmaPair.Side a = pair.initiator;
            RdmaPair.Side b = pair.responder;
            MemoryRegion src = a.register(a.buffer(64, 3), Access.LOCAL_WRITE);
            MemoryRegion sink = a.register(a.buffer(8, 0), Access.LOCAL_WRITE);
            MemoryRegion remote = b.register(b.buffer(8, 0), Access.REMOTE_READ);
            ByteBuf recvBuf = guarded(b, 32);
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
            byte[] content = bytes(recvBuf, 0, recvBuf.capacity());
            for (int i = 0; i < content.length; i++) {
                assertEquals((byte) CANARY, content[i], "nothing placed from the refused Send");
            }
            assertCanaries(recvBuf);
            assertFalse(a.ch.isOpen());
            Completion send = next(a.sendCq);
            assertTrue(send.isSuccess());
            assertEquals(WcStatus.REM_INV_REQ_ERR, next(a.sendCq).status());
            if (tooLong) {
                assertEquals(WcStatus.WR_FLUSH_ERR, next(b.recvCq).status());
            }
            pair.close();
        }
    }

    /** Puts a segment straight into the responder's engine, as if the peer had sent it. */
    /** A zero-length RDMA Write from the Initiator: the Responder has then received an FPDU (rule 4). */
    private static void releaseResponderHold(RdmaPair pair) {
        MemoryRegion none = pair.initiator.register(pair.initiator.buffer(1, 0), Access.LOCAL_WRITE);
        pair.initiator.qp.postSend(SendRequest.rdmaWrite(-1, none.slice(0, 0), 1, 0));
        pair.pump();
        assertTrue(pair.initiator.sendCq.poll().isSuccess());
    }

    private static void injectIntoEngine(RdmaPair pair, Object segment) {
        ChannelHandlerContext ctx = pair.responder.ch.pipeline().context(pair.responder.engine);
        pair.responder.engine.channelRead(ctx, segment);
        pair.responder.engine.channelReadComplete(ctx);
        pair.pump();
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
        RdmaPair pair = new RdmaPair();
        releaseResponderHold(pair);
        MemoryRegion recv = pair.responder.register(pair.responder.buffer(64, 0), Access.LOCAL_WRITE);
        pair.responder.qp.postRecv(RecvRequest.of(1, recv.all()));
        int ddpVersion = what.startsWith("DDP") ? 2 : 1;
        int control = (what.startsWith("RDMAP") ? 0x80 : 0x40) | (what.startsWith("unknown") ? 0x0C : 0x03);
        int qn = what.startsWith("invalid QN") ? 5 : 0;
        int msn = what.startsWith("MSN") ? 7 : 1;
        injectIntoEngine(pair, new DdpUntaggedSegment(true, ddpVersion, control, 0, qn, msn, 0,
                Unpooled.wrappedBuffer(new byte[4])));
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
        pair.close();
    }

    @Test
    void readRequestsBeyondIrdAreTerminated() {
        RdmaPair pair = new RdmaPair(MpaSettings.defaults(), MpaSettings.builder().ird(1).build());
        assertEquals(1, pair.responder.qp.mpaParameters().ird());
        releaseResponderHold(pair);
        MemoryRegion src = pair.responder.register(pair.responder.buffer(64, 9), Access.REMOTE_READ);
        var ctx = pair.responder.ch.pipeline().context(pair.responder.engine);
        for (int msn = 1; msn <= 2; msn++) {
            ByteBuf hdr = Unpooled.buffer(28);
            new ReadRequestHeader(0x1234, 0, 64, src.stag(), src.iova()).encode(hdr);
            // two Read Requests in one read batch: the first response is not yet flushed
            pair.responder.engine.channelRead(ctx, new DdpUntaggedSegment(true, 0x41, 0, 1, msn, 0, hdr));
        }
        pair.responder.engine.channelReadComplete(ctx);
        TerminateMessage t = terminateSentBy(pair.responder);
        assertEquals(new TerminateCause(0, 2, 0x07), t.cause(), "beyond IRD, as siw reports it");
        assertFalse(pair.responder.ch.isOpen());
        pair.close();
    }

    @Test
    void incomingTerminateMovesToErrorAndCompletesOutstandingWork() {
        RdmaPair pair = new RdmaPair();
        releaseResponderHold(pair);
        RdmaPair.Side a = pair.initiator;
        MemoryRegion sink = a.register(a.buffer(8, 0), Access.LOCAL_WRITE);
        MemoryRegion recv = a.register(a.buffer(8, 0), Access.LOCAL_WRITE);
        a.qp.postRecv(RecvRequest.of(5, recv.all()));
        // a Read the responder never answers: the responder's engine is bypassed by sending its Terminate
        a.qp.postSend(SendRequest.rdmaRead(6, sink.all(), 0x4242, 0));
        a.ch.runPendingTasks();
        Object o; // drop the Read Request octets
        while ((o = a.ch.readOutbound()) != null) {
            io.netty.util.ReferenceCountUtil.release(o);
        }
        TerminateMessage tm = TerminateMessage.forError(new TerminateCause(0, 2, 0x08), (DdpUntaggedSegment) null, null);
        pair.responder.ch.writeAndFlush(tm.toSegment(pair.responder.ch.alloc()));
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
        pair.close();
    }

    @ParameterizedTest(name = "RTR {0}")
    @CsvSource({"WRITE", "READ", "SEND"})
    void peerToPeerRtrIsInvisible(RtrType rtr) {
        RdmaPair pair = new RdmaPair(MpaSettings.builder().peerToPeer(true)
                .rtrTypes(RtrType.SEND, RtrType.WRITE, RtrType.READ).build(),
                MpaSettings.builder().rtrTypes(rtr).build());
        assertEquals(rtr, pair.initiator.qp.mpaParameters().rtrType());
        assertTrue(pair.responder.qp.established().isSuccess(), "established once the RTR arrived");
        // the Responder may now send first
        MemoryRegion recv = pair.initiator.register(pair.initiator.buffer(16, 0), Access.LOCAL_WRITE);
        pair.initiator.qp.postRecv(RecvRequest.of(1, recv.all()));
        MemoryRegion src = pair.responder.register(pair.responder.buffer(16, 0x31), Access.LOCAL_WRITE);
        pair.responder.qp.postSend(SendRequest.send(2, src.all()));
        pair.pump();
        Completion r = next(pair.initiator.recvCq);
        assertEquals(16, r.byteLength());
        assertTrue(next(pair.responder.sendCq).isSuccess());
        assertNull(pair.initiator.sendCq.poll(), "the RTR completes nowhere");
        assertNull(pair.responder.recvCq.poll());
        pair.close();
    }

    @Test
    void fencedRequestWaitsForEarlierReads() {
        RdmaPair pair = new RdmaPair();
        RdmaPair.Side a = pair.initiator;
        RdmaPair.Side b = pair.responder;
        MemoryRegion remote = b.register(b.buffer(64, 0x11), Access.REMOTE_READ);
        MemoryRegion recv = b.register(b.buffer(64, 0), Access.LOCAL_WRITE);
        b.qp.postRecv(RecvRequest.of(1, recv.all()));
        MemoryRegion local = a.register(a.buffer(64, 0), Access.LOCAL_WRITE);
        int before = a.written.size();
        a.qp.postSend(SendRequest.rdmaRead(1, local.all(), remote.stag(), remote.iova()));
        a.qp.postSend(SendRequest.send(2, local.slice(0, 16)).fenced());
        assertEquals(before + 1, a.written.size(), "only the Read Request went out: the Send is fenced");
        assertEquals(1, a.written.get(before).opcode());
        pair.pump();
        assertEquals(3, a.written.get(a.written.size() - 1).opcode(), "the Send follows the Read Response");
        assertEquals(1, next(a.sendCq).wrId());
        assertEquals(2, next(a.sendCq).wrId());
        // the Read's data arrived before the fenced Send left: the Send carried it
        assertArrayEquals(bytes(remote.memory(), 0, 16), bytes(recv.memory(), 0, 16));
        pair.close();
    }

    @Test
    void mpaCrcErrorIsTerminatedAsLlpError() {
        RdmaPair pair = new RdmaPair(MpaSettings.defaults(), MpaSettings.defaults());
        assertTrue(pair.responder.qp.mpaParameters().crc());
        releaseResponderHold(pair);
        MemoryRegion recv = pair.responder.register(pair.responder.buffer(64, 0), Access.LOCAL_WRITE);
        pair.responder.qp.postRecv(RecvRequest.of(1, recv.all()));
        // an FPDU whose CRC field is wrong: ULPDU_Length 18 + 2 (untagged Send header, 2 octets payload)
        ByteBuf bad = Unpooled.buffer().writeShort(20).writeBytes(new byte[] {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 2, 0, 0, 0, 0, 9, 9}).writeShort(0).writeInt(0x12345678);
        pair.responder.ch.writeInbound(bad);
        pair.pump();
        TerminateMessage t = terminateSentBy(pair.responder);
        assertEquals(new TerminateCause(2, 0, 0x02), t.cause(), "Layer LLP, EType MPA, CRC error");
        assertFalse(t.m() || t.d() || t.r(), "no header: it is not trustworthy (RFC 5040 §7)");
        assertFalse(pair.responder.ch.isOpen());
        assertEquals(WcStatus.WR_FLUSH_ERR, next(pair.responder.recvCq).status());
        assertEquals(QpState.ERROR, pair.initiator.qp.state());
        pair.close();
    }

    @Test
    void gracefulCloseSendsWhatWasPostedThenClosesWithoutAnotherFpdu() {
        RdmaPair pair = new RdmaPair();
        MemoryRegion recv = pair.responder.register(pair.responder.buffer(64, 0), Access.LOCAL_WRITE);
        pair.responder.qp.postRecv(RecvRequest.of(1, recv.all()));
        pair.responder.qp.postRecv(RecvRequest.of(2, recv.all()));
        MemoryRegion src = pair.initiator.register(pair.initiator.buffer(64, 0x33), Access.LOCAL_WRITE);
        pair.initiator.qp.postSend(SendRequest.send(1, src.all()));
        int written = pair.initiator.written.size();
        pair.initiator.qp.close();
        pair.pump();
        assertEquals(written, pair.initiator.written.size(), "no further segment for the close (RFC 5040 §6.2.1)");
        assertFalse(pair.initiator.ch.isOpen());
        assertFalse(pair.responder.ch.isOpen(), "the peer saw the close");
        Completion r = next(pair.responder.recvCq);
        assertTrue(r.isSuccess(), "the Send posted before the close was delivered");
        assertEquals(64, r.byteLength());
        assertEquals(WcStatus.WR_FLUSH_ERR, next(pair.responder.recvCq).status(), "the unused receive is flushed");
        assertNull(pair.responder.sendCq.poll(), "no Terminate was needed");
        pair.close();
    }
}
