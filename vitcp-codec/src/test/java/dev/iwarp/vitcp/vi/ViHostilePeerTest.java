package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.ViCallingAttributes;
import dev.iwarp.vitcp.ViCeHeader;
import dev.iwarp.vitcp.ViRdmaHeader;
import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.ViRemoteErrorCode;
import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.ViSegmentType;
import dev.iwarp.vitcp.VitcpCodec;
import dev.iwarp.vitcp.VitcpConfig;
import dev.iwarp.vitcp.VitcpConnection;
import dev.iwarp.vitcp.VitcpCrcMode;
import dev.iwarp.vitcp.VitcpSegmentDecoder;
import dev.iwarp.vitcp.VitcpSegmentEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A connected VI fed hand-made segments by a misbehaving peer: each gets the draft's error (at Reliable Reception a
 * NOP whose Message ACK and Remote Error Code say what was wrong, draft-dicecco-vitcp-01 §3.2), a clean close,
 * nothing placed outside a registered region and no leak.
 */
class ViHostilePeerTest {
    static final int MTU = 256;

    private final ViProtectionDomain pd = new ViProtectionDomain();
    private final ViCompletionQueue cq = new ViCompletionQueue();
    private final List<ViMemoryRegion> regions = new ArrayList<>();
    private EmbeddedChannel vi;

    private ViMemoryRegion region(int size, ViAccess... access) {
        ByteBuf b = Unpooled.buffer(size, size).writeZero(size);
        ViMemoryRegion r = pd.register(b, access);
        b.release();
        regions.add(r);
        return r;
    }

    /** A VI connected at {@code level}, RDMA write enabled iff {@code rdmaWrite}, read window 1. */
    private ViEndpoint connect(ViReliabilityLevel level, boolean rdmaWrite) {
        return connect(level, rdmaWrite, false);
    }

    private ViEndpoint connect(ViReliabilityLevel level, boolean rdmaWrite, boolean descriptorFlowControl) {
        ViEndpoint ep = new ViEndpoint(pd, cq, cq, VitcpConfig.builder().reliabilityLevel(level).build());
        int attrs = ViCallingAttributes.of(level, rdmaWrite, true, descriptorFlowControl, false);
        VitcpConnection c = new VitcpConnection(false, level, MTU, 1, false, VitcpCrcMode.ETHERNET_REFLECTED, attrs,
                ViCallingAttributes.of(level, true, true, false, false), new byte[0], new byte[0], 0, false);
        vi = new EmbeddedChannel(new VitcpCodec(), ep.connectedHandler(c));
        return ep;
    }

    private void peerSends(ViSegment s) {
        EmbeddedChannel enc = new EmbeddedChannel(new VitcpSegmentEncoder(VitcpCrcMode.ETHERNET_REFLECTED));
        enc.writeOutbound(s);
        ByteBuf wire = enc.readOutbound();
        enc.finishAndReleaseAll();
        if (vi.isOpen()) {
            vi.writeInbound(wire);
        } else {
            wire.release();
        }
    }

    /** Every segment the VI wrote, decoded. */
    private List<ViSegment> viSent() {
        EmbeddedChannel dec = new EmbeddedChannel(new VitcpSegmentDecoder(VitcpCrcMode.ETHERNET_REFLECTED));
        vi.runPendingTasks();
        Object m;
        while ((m = vi.readOutbound()) != null) {
            dec.writeInbound(m);
        }
        List<ViSegment> out = new ArrayList<>();
        while ((m = dec.readInbound()) != null) {
            ViSegment s = (ViSegment) m;
            out.add(s);
            s.release(); // fields stay readable; payloads are not inspected here
        }
        dec.finishAndReleaseAll();
        return out;
    }

    /** Asserts the last thing the VI sent is an error NOP for {@code messageAck} with {@code viErrorType}, then closed. */
    private void assertErrorNopAndClose(int messageAck, int viErrorType) {
        List<ViSegment> sent = viSent();
        ViSegment last = sent.get(sent.size() - 1);
        assertEquals(ViSegmentType.NOP, last.type());
        assertEquals(messageAck, last.messageAck());
        assertEquals(viErrorType, ViRemoteErrorCode.viErrorType(last.remoteErrorCode()));
        assertFalse(vi.isOpen());
    }

    private static ViSegment.Builder send(int msg, int offset, boolean eom) {
        return ViSegment.builder(ViSegmentType.SEND).messageNumber(msg).dataOffset(offset).endOfMessage(eom);
    }

    @AfterEach
    void tearDown() {
        if (vi != null) {
            vi.finishAndReleaseAll();
        }
        regions.forEach(ViMemoryRegion::deregister);
    }

    @Test
    void segmentAtWrongDataOffset() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ViMemoryRegion r = region(64);
        ep.postRecv(ViRecvRequest.of(1, r.all()));
        peerSends(send(5, 0, false).build(Unpooled.wrappedBuffer(new byte[] {1, 2})));
        peerSends(send(5, 3, true).build(Unpooled.wrappedBuffer(new byte[] {3})));
        assertErrorNopAndClose(5, ViRemoteErrorCode.UTE);
        assertEquals(ViStatus.FLUSHED, cq.poll().status());
    }

    @Test
    void newMessageBeforeEndOfMessage() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ep.postRecv(ViRecvRequest.of(1, region(64).all()));
        ep.postRecv(ViRecvRequest.of(2, region(64).all()));
        peerSends(send(5, 0, false).build(Unpooled.wrappedBuffer(new byte[] {1})));
        peerSends(send(6, 0, true).build(Unpooled.wrappedBuffer(new byte[] {1})));
        assertErrorNopAndClose(6, ViRemoteErrorCode.UTE);
    }

    @Test
    void gapInMessageNumbers() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ep.postRecv(ViRecvRequest.of(1, region(64).all()));
        ep.postRecv(ViRecvRequest.of(2, region(64).all()));
        peerSends(send(5, 0, true).build());
        peerSends(send(7, 0, true).build());
        List<ViSegment> sent = viSent();
        assertEquals(ViStatus.SUCCESS, cq.poll().status());
        ViSegment last = sent.get(sent.size() - 1);
        assertEquals(7, last.messageAck());
        assertEquals(ViRemoteErrorCode.UTE, ViRemoteErrorCode.viErrorType(last.remoteErrorCode()));
        assertFalse(vi.isOpen());
    }

    @Test
    void segmentAboveTheAgreedMtu() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ep.postRecv(ViRecvRequest.of(1, region(1024).all()));
        peerSends(send(1, 0, true).build(Unpooled.wrappedBuffer(new byte[MTU + 1])));
        assertErrorNopAndClose(1, ViRemoteErrorCode.UTE);
    }

    @Test
    void connectRequestWhileConnected() {
        connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        peerSends(ViSegment.builder(ViSegmentType.CONNECT_REQUEST).ceHeader(new ViCeHeader(
                ViCallingAttributes.RELIABLE_RECEPTION, 100, new byte[0], 0, new byte[0], List.of(), false)).build());
        assertErrorNopAndClose(0, ViRemoteErrorCode.UTE);
    }

    @Test
    void undecodableBytes() {
        connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        vi.writeInbound(Unpooled.wrappedBuffer(new byte[] {9, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0}));
        assertErrorNopAndClose(0, ViRemoteErrorCode.UTE);
    }

    @Test
    void rdmaWriteWhenTheViDisabledIt() {
        connect(ViReliabilityLevel.RELIABLE_RECEPTION, false);
        ViMemoryRegion r = region(64, ViAccess.RDMA_WRITE);
        peerSends(ViSegment.builder(ViSegmentType.RDMA_WRITE).messageNumber(3).endOfMessage(true)
                .rdmaHeader(new ViRdmaHeader(r.address(), r.handle(), 4)).build(Unpooled.wrappedBuffer(new byte[] {
                    1, 2, 3, 4})));
        assertErrorNopAndClose(3, ViRemoteErrorCode.MPE);
        assertArrayEquals(new byte[64], ViPair.read(r, 64));
    }

    @Test
    void rdmaWriteWithUnknownHandleOrWrappingAddress() {
        connect(ViReliabilityLevel.RELIABLE_DELIVERY, true);
        ViMemoryRegion r = region(64, ViAccess.RDMA_WRITE);
        // address just below the region with a length that wraps into it: outside, refused, closed (no NOP)
        peerSends(ViSegment.builder(ViSegmentType.RDMA_WRITE).messageNumber(3).endOfMessage(true)
                .rdmaHeader(new ViRdmaHeader(r.address() - 2, r.handle(), 4)).build(Unpooled.wrappedBuffer(
                        new byte[] {1, 2, 3, 4})));
        List<ViSegment> sent = viSent();
        assertTrue(sent.isEmpty(), "Reliable Delivery reports no Remote Error Code: " + sent);
        assertFalse(vi.isOpen());
        assertArrayEquals(new byte[64], ViPair.read(r, 64));
    }

    @Test
    void readRequestsBeyondTheWindow() {
        connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ViMemoryRegion r = region(64, ViAccess.RDMA_READ);
        // both arrive in one read, so the first response is not yet sent when the second request is seen
        EmbeddedChannel enc = new EmbeddedChannel(new VitcpSegmentEncoder(VitcpCrcMode.ETHERNET_REFLECTED));
        for (int msg = 1; msg <= 2; msg++) {
            enc.writeOutbound(ViSegment.builder(ViSegmentType.RDMA_READ_REQUEST).messageNumber(msg).endOfMessage(true)
                    .rdmaHeader(new ViRdmaHeader(r.address(), r.handle(), 64)).build());
        }
        io.netty.buffer.CompositeByteBuf both = Unpooled.compositeBuffer();
        Object m;
        while ((m = enc.readOutbound()) != null) {
            both.addComponent(true, (ByteBuf) m);
        }
        enc.finishAndReleaseAll();
        vi.writeInbound(both);
        assertErrorNopAndClose(2, ViRemoteErrorCode.VDE);
    }

    @Test
    void readRequestWithoutReadAccess() {
        connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ViMemoryRegion r = region(64, ViAccess.RDMA_WRITE);
        peerSends(ViSegment.builder(ViSegmentType.RDMA_READ_REQUEST).messageNumber(9).endOfMessage(true)
                .rdmaHeader(new ViRdmaHeader(r.address(), r.handle(), 64)).build());
        assertErrorNopAndClose(9, ViRemoteErrorCode.MPE);
    }

    @Test
    void readResponseNobodyAskedFor() {
        connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        peerSends(ViSegment.builder(ViSegmentType.RDMA_READ_RESPONSE).messageNumber(4).endOfMessage(true)
                .build(Unpooled.wrappedBuffer(new byte[8])));
        assertErrorNopAndClose(4, ViRemoteErrorCode.UTE);
    }

    @Test
    void sendLongerThanTheReceiveDescriptorOnUnreliableIsDropped() {
        ViEndpoint ep = connect(ViReliabilityLevel.UNRELIABLE, true);
        ViMemoryRegion small = region(4);
        ViMemoryRegion next = region(8);
        ep.postRecv(ViRecvRequest.of(1, small.all()));
        ep.postRecv(ViRecvRequest.of(2, next.all()));
        peerSends(send(1, 0, true).build(Unpooled.wrappedBuffer(new byte[] {1, 2, 3, 4, 5, 6})));
        ViCompletion c = cq.poll();
        assertEquals(1, c.wrId());
        assertEquals(ViStatus.LOCAL_LENGTH_ERROR, c.status());
        assertTrue(vi.isOpen());
        assertTrue(viSent().isEmpty());
        peerSends(send(2, 0, true).build(Unpooled.wrappedBuffer(new byte[] {7, 7})));
        assertEquals(new ViCompletion(2, ViOpcode.RECV, ViStatus.SUCCESS, 2, 0, false), cq.poll());
        assertNull(cq.poll());
    }

    private int sendSegmentsWritten() {
        int n = 0;
        vi.runPendingTasks();
        Object m;
        while ((m = vi.readOutbound()) != null) {
            ByteBuf b = (ByteBuf) m;
            if ((b.getByte(1) & 0x1F) == ViSegmentType.SEND.code()) {
                n++;
            }
            b.release();
        }
        return n;
    }

    @Test
    void rxDescriptorsPostedWrapsModulo65536() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_DELIVERY, true, true);
        ViMemoryRegion r = region(1);
        int total = 65540;
        for (int i = 0; i < total; i++) {
            ep.postSend(ViSendRequest.send(i, r.segment(0, 0)));
        }
        assertEquals(0, sendSegmentsWritten(), "the peer posted nothing yet");
        peerSends(ViSegment.builder(ViSegmentType.NOP).rxDescriptorsPosted(0xFFF0).build());
        assertEquals(0xFFF0, sendSegmentsWritten());
        // 65540 posted in total: the counter wrapped to 4, which releases the last 20
        peerSends(ViSegment.builder(ViSegmentType.NOP).rxDescriptorsPosted(4).build());
        assertEquals(20, sendSegmentsWritten());
        int completed = 0;
        while (cq.poll() != null) {
            completed++;
        }
        assertEquals(total, completed);
        assertTrue(vi.isOpen());
    }

    @Test
    void readResponseMarkedWithTransmitErrorCompletesTheReadInError() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_DELIVERY, true);
        ViMemoryRegion dst = region(8);
        ep.postSend(ViSendRequest.rdmaRead(77, 0x1000, 0x42, dst.all()));
        List<ViSegment> sent = viSent();
        assertEquals(ViSegmentType.RDMA_READ_REQUEST, sent.get(0).type());
        assertEquals(new ViRdmaHeader(0x1000, 0x42, 8), sent.get(0).rdmaHeader());
        int msg = sent.get(0).messageNumber();
        // §3.2 Transmit Error: the receiver regards the entire message as in error
        peerSends(ViSegment.builder(ViSegmentType.RDMA_READ_RESPONSE).messageNumber(msg).dataOffset(0)
                .build(Unpooled.wrappedBuffer(new byte[4])));
        peerSends(ViSegment.builder(ViSegmentType.RDMA_READ_RESPONSE).messageNumber(msg).dataOffset(4)
                .endOfMessage(true).transmitError(true).build(Unpooled.wrappedBuffer(new byte[4])));
        assertEquals(new ViCompletion(77, ViOpcode.RDMA_READ, ViStatus.TRANSMIT_ERROR, 8, 0, false), cq.poll());
        assertTrue(vi.isOpen());
    }

    @Test
    void readResponseLongerThanTheReadIsRefused() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_DELIVERY, true);
        ViMemoryRegion dst = region(4);
        ViMemoryRegion after = region(16);
        ep.postSend(ViSendRequest.rdmaRead(5, 0x1000, 0x42, dst.all()));
        int msg = viSent().get(0).messageNumber();
        peerSends(ViSegment.builder(ViSegmentType.RDMA_READ_RESPONSE).messageNumber(msg).endOfMessage(true)
                .build(Unpooled.wrappedBuffer(new byte[] {1, 2, 3, 4, 5, 6, 7, 8})));
        assertFalse(vi.isOpen());
        assertEquals(new ViCompletion(5, ViOpcode.RDMA_READ, ViStatus.FLUSHED, 0, 0, false), cq.poll());
        assertArrayEquals(new byte[4], ViPair.read(dst, 4));
        assertArrayEquals(new byte[16], ViPair.read(after, 16));
    }
}
