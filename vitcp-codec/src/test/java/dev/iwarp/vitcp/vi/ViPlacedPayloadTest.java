package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.ViCallingAttributes;
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
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
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
 * A connected VI whose peer's data segments arrive header first: a payload whose segment passes every check goes
 * straight into the posted receive, the region or the RDMA Read's buffer ({@link ViPlacementCheck}); one that any
 * check refuses is received whole and refused as before, with nothing of it placed; a CRC error on a placed
 * payload still gets draft-dicecco-vitcp-01 §3.6's rule for the reliability level.
 */
class ViPlacedPayloadTest {
    static final int MTU = 8192;
    static final int SIZE = 6000;

    private final ViProtectionDomain pd = new ViProtectionDomain();
    private final ViCompletionQueue cq = new ViCompletionQueue();
    private final List<ViMemoryRegion> regions = new ArrayList<>();
    /** Whether each data segment the VI received was placed by the decoder, in order. */
    private final List<Boolean> placed = new ArrayList<>();
    private EmbeddedChannel vi;
    private boolean crc;

    private ViMemoryRegion region(int size, ViAccess... access) {
        ByteBuf b = Unpooled.directBuffer(size, size).writeZero(size);
        ViMemoryRegion r = pd.register(b, access);
        b.release();
        regions.add(r);
        return r;
    }

    /** A VI connected at {@code level} with the CRC on or off, MTU {@value #MTU}, read window 1. */
    private ViEndpoint connect(ViReliabilityLevel level, boolean crcOn) {
        crc = crcOn;
        ViEndpoint ep = new ViEndpoint(pd, cq, cq, VitcpConfig.builder().reliabilityLevel(level).build());
        int attrs = ViCallingAttributes.of(level, true, true, false, false);
        VitcpConnection c = new VitcpConnection(false, level, MTU, 1, crcOn, VitcpCrcMode.ETHERNET_REFLECTED, attrs,
                attrs, new byte[0], new byte[0], 0, false);
        VitcpCodec codec = new VitcpCodec();
        codec.crcEnabled(crcOn);
        vi = new EmbeddedChannel(codec, new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof ViSegment s && s.type().carriesPayload()) {
                    placed.add(s.placed());
                }
                ctx.fireChannelRead(msg);
            }
        }, ep.connectedHandler(c));
        return ep;
    }

    private byte[] wire(ViSegment s) {
        VitcpSegmentEncoder encoder = new VitcpSegmentEncoder(VitcpCrcMode.ETHERNET_REFLECTED);
        encoder.crcEnabled(crc);
        EmbeddedChannel enc = new EmbeddedChannel(encoder);
        enc.writeOutbound(s);
        ByteBuf b = enc.readOutbound();
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        b.release();
        enc.finishAndReleaseAll();
        return out;
    }

    /** The peer's segment, its headers in one read and the rest in another. */
    private void peerSends(ViSegment s) {
        int headers = s.headersLength();
        peerSends(wire(s), headers);
    }

    private void peerSends(byte[] wire, int firstRead) {
        if (vi.isOpen()) {
            vi.writeInbound(Unpooled.wrappedBuffer(wire, 0, firstRead));
        }
        if (vi.isOpen()) {
            vi.writeInbound(Unpooled.wrappedBuffer(wire, firstRead, wire.length - firstRead));
        }
    }

    private static byte[] pattern(int n, int seed) {
        return ViPair.pattern(n, seed);
    }

    private static ViSegment send(int msg, int offset, boolean eom, byte[] payload) {
        return ViSegment.builder(ViSegmentType.SEND).messageNumber(msg).dataOffset(offset).endOfMessage(eom)
                .build(Unpooled.wrappedBuffer(payload));
    }

    private static ViSegment write(int msg, int offset, ViMemoryRegion r, long at, long length, byte[] payload) {
        return ViSegment.builder(ViSegmentType.RDMA_WRITE).messageNumber(msg).dataOffset(offset).endOfMessage(true)
                .rdmaHeader(new ViRdmaHeader(r.address() + at, r.handle(), (int) length))
                .build(Unpooled.wrappedBuffer(payload));
    }

    private static byte[] read(ViMemoryRegion r) {
        return ViPair.read(r, r.length());
    }

    /** The segments the VI wrote, decoded (fields only). */
    private List<ViSegment> viSent() {
        VitcpSegmentDecoder d = new VitcpSegmentDecoder(VitcpCrcMode.ETHERNET_REFLECTED);
        d.crcEnabled(crc);
        EmbeddedChannel dec = new EmbeddedChannel(d);
        vi.runPendingTasks();
        Object m;
        while ((m = vi.readOutbound()) != null) {
            dec.writeInbound(m);
        }
        List<ViSegment> out = new ArrayList<>();
        while ((m = dec.readInbound()) != null) {
            ViSegment s = (ViSegment) m;
            out.add(s);
            s.release();
        }
        dec.finishAndReleaseAll();
        return out;
    }

    @AfterEach
    void tearDown() {
        if (vi != null) {
            vi.finishAndReleaseAll();
        }
        regions.forEach(ViMemoryRegion::deregister);
    }

    @Test
    void sendOfTwoSegmentsIsPlacedInThePostedReceive() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_DELIVERY, true);
        ViMemoryRegion r = region(2 * SIZE + 8);
        ep.postRecv(ViRecvRequest.of(1, r.segment(8, 2 * SIZE)));
        byte[] data = pattern(2 * SIZE, 1);
        peerSends(send(1, 0, false, java.util.Arrays.copyOfRange(data, 0, SIZE)));
        peerSends(send(1, SIZE, true, java.util.Arrays.copyOfRange(data, SIZE, 2 * SIZE)));
        assertEquals(List.of(true, true), placed);
        assertEquals(new ViCompletion(1, ViOpcode.RECV, ViStatus.SUCCESS, 2 * SIZE, 0, false), cq.poll());
        byte[] got = new byte[2 * SIZE];
        r.buffer().getBytes(8, got);
        assertArrayEquals(data, got);
        assertEquals(1, ep.peerActivity().sends());
        assertTrue(vi.isOpen());
    }

    @Test
    void writeIsPlacedInItsRegion() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ViMemoryRegion r = region(SIZE + 100, ViAccess.RDMA_WRITE);
        byte[] data = pattern(SIZE, 2);
        peerSends(write(1, 0, r, 100, SIZE, data));
        assertEquals(List.of(true), placed);
        byte[] got = new byte[SIZE];
        r.buffer().getBytes(100, got);
        assertArrayEquals(data, got);
        assertEquals(SIZE, ep.peerActivity().writeOctets());
        assertTrue(vi.isOpen());
    }

    @Test
    void readResponseIsPlacedInTheReadsBuffer() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_DELIVERY, false);
        ViMemoryRegion sink = region(SIZE);
        ep.postSend(ViSendRequest.rdmaRead(5, 0x1000, 0x77, sink.all()));
        ViSegment request = viSent().get(0);
        assertEquals(ViSegmentType.RDMA_READ_REQUEST, request.type());
        byte[] data = pattern(SIZE, 3);
        peerSends(ViSegment.builder(ViSegmentType.RDMA_READ_RESPONSE).messageNumber(request.messageNumber())
                .endOfMessage(true).build(Unpooled.wrappedBuffer(data)));
        assertEquals(List.of(true), placed);
        assertEquals(new ViCompletion(5, ViOpcode.RDMA_READ, ViStatus.SUCCESS, SIZE, 0, false), cq.poll());
        assertArrayEquals(data, read(sink));
    }

    /** A receive of two data segments: the payload would span both, so it is received whole and scattered. */
    @Test
    void sendAcrossTwoDataSegmentsIsCopiedAsBefore() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_DELIVERY, true);
        ViMemoryRegion r = region(SIZE);
        ep.postRecv(ViRecvRequest.of(1, r.segment(0, SIZE / 2), r.segment(SIZE / 2, SIZE / 2)));
        byte[] data = pattern(SIZE, 4);
        peerSends(send(1, 0, true, data));
        assertEquals(List.of(false), placed);
        assertEquals(ViStatus.SUCCESS, cq.poll().status());
        assertArrayEquals(data, read(r));
    }

    // ------------------------------------------------------------------ refused: nothing placed

    /** The VI's last segment is an error NOP for {@code messageAck} with {@code viErrorType}, and TCP closed. */
    private void assertErrorNopAndClose(int messageAck, int viErrorType) {
        List<ViSegment> sent = viSent();
        ViSegment last = sent.get(sent.size() - 1);
        assertEquals(ViSegmentType.NOP, last.type());
        assertEquals(messageAck, last.messageAck());
        assertEquals(viErrorType, ViRemoteErrorCode.viErrorType(last.remoteErrorCode()));
        assertFalse(vi.isOpen());
    }

    @Test
    void writeToARegionWithoutWriteAccessPlacesNothing() {
        connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ViMemoryRegion r = region(SIZE, ViAccess.RDMA_READ);
        peerSends(write(3, 0, r, 0, SIZE, pattern(SIZE, 5)));
        assertEquals(List.of(false), placed);
        assertErrorNopAndClose(3, ViRemoteErrorCode.MPE);
        assertArrayEquals(new byte[SIZE], read(r));
    }

    @Test
    void writeBeyondItsRegionPlacesNothing() {
        connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ViMemoryRegion r = region(SIZE, ViAccess.RDMA_WRITE);
        peerSends(write(3, 0, r, 1, SIZE, pattern(SIZE, 6)));
        assertEquals(List.of(false), placed);
        assertErrorNopAndClose(3, ViRemoteErrorCode.MPE);
        assertArrayEquals(new byte[SIZE], read(r));
    }

    @Test
    void writeSegmentBeyondItsRdmaLengthPlacesNothing() {
        connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ViMemoryRegion r = region(3 * SIZE, ViAccess.RDMA_WRITE);
        byte[] first = pattern(SIZE, 7);
        peerSends(ViSegment.builder(ViSegmentType.RDMA_WRITE).messageNumber(3)
                .rdmaHeader(new ViRdmaHeader(r.address(), r.handle(), SIZE + 10))
                .build(Unpooled.wrappedBuffer(first)));
        peerSends(ViSegment.builder(ViSegmentType.RDMA_WRITE).messageNumber(3).dataOffset(SIZE).endOfMessage(true)
                .rdmaHeader(new ViRdmaHeader(r.address(), r.handle(), SIZE + 10))
                .build(Unpooled.wrappedBuffer(pattern(SIZE, 8))));
        assertEquals(List.of(true, false), placed);
        assertErrorNopAndClose(3, ViRemoteErrorCode.MPE);
        byte[] expected = new byte[3 * SIZE];
        System.arraycopy(first, 0, expected, 0, SIZE);
        assertArrayEquals(expected, read(r));
    }

    @Test
    void sendLongerThanItsReceivePlacesNothing() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ViMemoryRegion r = region(SIZE + 100);
        ep.postRecv(ViRecvRequest.of(1, r.segment(0, SIZE - 1)));
        peerSends(send(4, 0, true, pattern(SIZE, 9)));
        assertEquals(List.of(false), placed);
        assertErrorNopAndClose(4, ViRemoteErrorCode.VDE);
        assertArrayEquals(new byte[SIZE + 100], read(r));
    }

    @Test
    void sendWithNoReceivePostedIsRefused() {
        connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        peerSends(send(4, 0, true, pattern(SIZE, 10)));
        assertEquals(List.of(false), placed);
        assertErrorNopAndClose(4, ViRemoteErrorCode.VDE);
    }

    @Test
    void sendOutOfSequencePlacesNothing() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ViMemoryRegion first = region(16);
        ViMemoryRegion r = region(SIZE);
        ep.postRecv(ViRecvRequest.of(1, first.all()));
        ep.postRecv(ViRecvRequest.of(2, r.all()));
        peerSends(send(4, 0, true, new byte[16]));
        peerSends(send(6, 0, true, pattern(SIZE, 11)));
        assertEquals(List.of(false, false), placed);
        assertErrorNopAndClose(6, ViRemoteErrorCode.UTE);
        assertArrayEquals(new byte[SIZE], read(r));
    }

    @Test
    void segmentAboveTheMtuPlacesNothing() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ViMemoryRegion r = region(2 * MTU);
        ep.postRecv(ViRecvRequest.of(1, r.all()));
        peerSends(send(1, 0, true, pattern(MTU + 1, 12)));
        assertEquals(List.of(false), placed);
        assertErrorNopAndClose(1, ViRemoteErrorCode.UTE);
        assertArrayEquals(new byte[2 * MTU], read(r));
    }

    /** At Reliable Reception a segment whose Remote Error Code reports an error breaks the VI before its payload. */
    @Test
    void sendReportingAnErrorPlacesNothing() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ViMemoryRegion r = region(SIZE);
        ep.postRecv(ViRecvRequest.of(1, r.all()));
        peerSends(ViSegment.builder(ViSegmentType.SEND).messageNumber(1).endOfMessage(true)
                .remoteErrorCode(ViRemoteErrorCode.of(ViRemoteErrorCode.MPE, 0))
                .build(Unpooled.wrappedBuffer(pattern(SIZE, 13))));
        assertEquals(List.of(false), placed);
        assertFalse(vi.isOpen());
        assertArrayEquals(new byte[SIZE], read(r));
        assertEquals(ViStatus.FLUSHED, cq.poll().status());
    }

    // ------------------------------------------------------------------ CRC errors on placed payloads (§3.6)

    /** The segment's octets with one payload octet changed (its CRC no longer matches). */
    private byte[] corrupted(ViSegment s) {
        int at = s.headersLength() + 1000;
        byte[] w = wire(s);
        w[at] ^= 0x40;
        return w;
    }

    @Test
    void badCrcOnAPlacedSendAtReliableDeliveryCompletesItWithTransportErrorAndCloses() {
        ViEndpoint ep = connect(ViReliabilityLevel.RELIABLE_DELIVERY, true);
        ViMemoryRegion r = region(SIZE);
        ep.postRecv(ViRecvRequest.of(1, r.all()));
        peerSends(corrupted(send(1, 0, true, pattern(SIZE, 14))), ViSegment.HEADER_LENGTH);
        assertEquals(List.of(true), placed);
        assertEquals(new ViCompletion(1, ViOpcode.RECV, ViStatus.TRANSPORT_ERROR, SIZE, 0, false), cq.poll());
        assertFalse(vi.isOpen());
    }

    @Test
    void badCrcOnAPlacedSendAtUnreliableCompletesItWithTransportErrorAndGoesOn() {
        ViEndpoint ep = connect(ViReliabilityLevel.UNRELIABLE, true);
        ViMemoryRegion r = region(SIZE);
        ep.postRecv(ViRecvRequest.of(1, r.all()));
        ep.postRecv(ViRecvRequest.of(2, r.all()));
        peerSends(corrupted(send(1, 0, true, pattern(SIZE, 15))), ViSegment.HEADER_LENGTH);
        byte[] data = pattern(SIZE, 16);
        peerSends(send(2, 0, true, data));
        assertEquals(List.of(true, true), placed);
        assertEquals(ViStatus.TRANSPORT_ERROR, cq.poll().status());
        assertEquals(new ViCompletion(2, ViOpcode.RECV, ViStatus.SUCCESS, SIZE, 0, false), cq.poll());
        assertArrayEquals(data, read(r));
        assertTrue(vi.isOpen());
    }

    /** At a reliable level a bad CRC closes the VI; the payload read before the CRC was known stays in its region. */
    @Test
    void badCrcOnAPlacedWriteAtReliableReceptionIsAnUnrecoverableTransportError() {
        connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ViMemoryRegion r = region(SIZE, ViAccess.RDMA_WRITE);
        peerSends(corrupted(write(7, 0, r, 0, SIZE, pattern(SIZE, 17))), ViSegment.HEADER_LENGTH + ViRdmaHeader.LENGTH);
        assertEquals(List.of(true), placed);
        assertErrorNopAndClose(7, ViRemoteErrorCode.UTE);
    }

    /** Unreliable VIs do not read RDMA Writes into place: a CRC-failed one is not placed and the VI goes on. */
    @Test
    void writesAtUnreliableAreReceivedWholeSoABadCrcPlacesNothing() {
        connect(ViReliabilityLevel.UNRELIABLE, true);
        ViMemoryRegion r = region(SIZE, ViAccess.RDMA_WRITE);
        peerSends(corrupted(write(7, 0, r, 0, SIZE, pattern(SIZE, 18))), ViSegment.HEADER_LENGTH + ViRdmaHeader.LENGTH);
        assertEquals(List.of(false), placed);
        assertArrayEquals(new byte[SIZE], read(r));
        assertTrue(vi.isOpen());
        assertNull(cq.poll());
    }

    /** A region deregistered while its payload is being read: the Write fails as one found deregistered did. */
    @Test
    void regionDeregisteredDuringThePayload() {
        connect(ViReliabilityLevel.RELIABLE_RECEPTION, true);
        ViMemoryRegion r = region(SIZE, ViAccess.RDMA_WRITE);
        byte[] w = wire(write(7, 0, r, 0, SIZE, pattern(SIZE, 19)));
        int headers = ViSegment.HEADER_LENGTH + ViRdmaHeader.LENGTH;
        vi.writeInbound(Unpooled.wrappedBuffer(w, 0, headers + 10));
        r.deregister();
        vi.writeInbound(Unpooled.wrappedBuffer(w, headers + 10, w.length - headers - 10));
        assertEquals(List.of(true), placed);
        assertErrorNopAndClose(7, ViRemoteErrorCode.MPE);
    }
}
