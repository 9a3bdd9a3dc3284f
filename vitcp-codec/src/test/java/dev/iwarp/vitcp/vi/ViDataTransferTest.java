package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.VitcpConfig;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.iwarp.vitcp.vi.ViPair.fill;
import static dev.iwarp.vitcp.vi.ViPair.pattern;
import static dev.iwarp.vitcp.vi.ViPair.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Loopback data transfer over two connected VIs (draft-dicecco-vitcp-01 §2.2.2.2.3, §3.2-§3.6). */
class ViDataTransferTest {
    static final int MTU = 8192;
    static final int[] SIZES = {0, 1, MTU - 1, MTU, MTU + 1, 16 << 20};

    static VitcpConfig config(ViReliabilityLevel level) {
        return VitcpConfig.builder().reliabilityLevel(level).mtu(MTU).build();
    }

    private static int segmentType(String hex) {
        return Integer.parseInt(hex.substring(2, 4), 16) & 0x1F;
    }

    private static int hexInt(String hex, int octet) {
        return (int) Long.parseLong(hex.substring(octet * 2, octet * 2 + 8), 16);
    }

    @ParameterizedTest
    @EnumSource(ViReliabilityLevel.class)
    void sendAtAllSizes(ViReliabilityLevel level) {
        try (ViPair p = new ViPair(config(level), config(level))) {
            ViMemoryRegion src = p.region(p.pdA, 16 << 20);
            ViMemoryRegion dst = p.region(p.pdB, 16 << 20);
            p.connect();
            p.pair.record(true);
            long wr = 0;
            for (int size : SIZES) {
                byte[] data = pattern(size, size);
                fill(src, data);
                p.b.postRecv(ViRecvRequest.of(++wr, dst.segment(0, 16 << 20)));
                p.a.postSend(ViSendRequest.send(wr, src.segment(0, size)).withImmediate(size));
                p.pair.pump();
                ViCompletion r = p.recvB.poll();
                assertEquals(new ViCompletion(wr, ViOpcode.RECV, ViStatus.SUCCESS, size, size, true), r);
                assertEquals(new ViCompletion(wr, ViOpcode.SEND, ViStatus.SUCCESS, size, size, true), p.sendA.poll());
                byte[] got = new byte[size];
                dst.buffer().getBytes(0, got);
                assertArrayEquals(data, got, "size " + size);
            }
            // segmentation: MTU+1 went as two segments at Data Offsets 0 and MTU (§3.2), none above the MTU
            List<String> sends = new ArrayList<>();
            for (String s : p.pair.aToB()) {
                if (segmentType(s) == 0) {
                    sends.add(s);
                    assertTrue(Integer.parseInt(s.substring(4, 8), 16) - 24 <= MTU);
                }
            }
            // sizes 0, 1, MTU-1, MTU -> one segment each; MTU+1 -> two; 16 MiB -> 2048
            assertEquals(4 + 2 + (16 << 20) / MTU, sends.size());
            assertEquals(0, hexInt(sends.get(4), 4));
            assertEquals(MTU, hexInt(sends.get(5), 4));
            assertEquals(0x00, Integer.parseInt(sends.get(4).substring(2, 4), 16) & 0x80); // not EOM
            assertEquals(0x80, Integer.parseInt(sends.get(5).substring(2, 4), 16) & 0x80); // EOM
            assertTrue(p.pair.a().isOpen() && p.pair.b().isOpen());
        }
    }

    @ParameterizedTest
    @EnumSource(ViReliabilityLevel.class)
    void rdmaWriteWithImmediateDataAtAllSizes(ViReliabilityLevel level) {
        try (ViPair p = new ViPair(config(level), config(level))) {
            ViMemoryRegion src = p.region(p.pdA, 16 << 20);
            ViMemoryRegion dst = p.region(p.pdB, (16 << 20) + 100, ViAccess.RDMA_WRITE);
            ViMemoryRegion none = p.region(p.pdB, 1);
            p.connect();
            long wr = 0;
            for (int size : SIZES) {
                byte[] data = pattern(size, size + 7);
                fill(src, data);
                p.b.postRecv(ViRecvRequest.of(++wr, none.segment(0, 0)));
                p.a.postSend(ViSendRequest.rdmaWrite(wr, dst.address() + 100, dst.handle(), src.segment(0, size))
                        .withImmediate(0x5EED0000 + size));
                p.pair.pump();
                assertEquals(new ViCompletion(wr, ViOpcode.RECV_RDMA_WRITE_WITH_IMMEDIATE, ViStatus.SUCCESS, 0,
                        0x5EED0000 + size, true), p.recvB.poll());
                ViCompletion s = p.sendA.poll();
                assertEquals(ViStatus.SUCCESS, s.status());
                assertEquals(size, s.byteLength());
                byte[] got = new byte[size];
                dst.buffer().getBytes(100, got);
                assertArrayEquals(data, got, "size " + size);
            }
            // an RDMA Write without immediate data consumes no receive descriptor
            p.a.postSend(ViSendRequest.rdmaWrite(99, dst.address(), dst.handle(), src.segment(0, 10)));
            p.pair.pump();
            assertEquals(ViStatus.SUCCESS, p.sendA.poll().status());
            assertNull(p.recvB.poll());
        }
    }

    @ParameterizedTest
    @EnumSource(value = ViReliabilityLevel.class, names = {"RELIABLE_DELIVERY", "RELIABLE_RECEPTION"})
    void rdmaReadAtAllSizes(ViReliabilityLevel level) {
        try (ViPair p = new ViPair(config(level), config(level))) {
            ViMemoryRegion src = p.region(p.pdB, 16 << 20, ViAccess.RDMA_READ);
            ViMemoryRegion dst = p.region(p.pdA, 16 << 20);
            p.connect();
            long wr = 0;
            for (int size : SIZES) {
                byte[] data = pattern(size, size + 3);
                fill(src, data);
                p.a.postSend(ViSendRequest.rdmaRead(++wr, src.address(), src.handle(), dst.segment(0, size)));
                p.pair.pump();
                assertEquals(new ViCompletion(wr, ViOpcode.RDMA_READ, ViStatus.SUCCESS, size, 0, false),
                        p.sendA.poll());
                byte[] got = new byte[size];
                dst.buffer().getBytes(0, got);
                assertArrayEquals(data, got, "size " + size);
            }
        }
    }

    @Test
    void rdmaReadIsNotAvailableOnUnreliable() {
        try (ViPair p = new ViPair(config(ViReliabilityLevel.UNRELIABLE), config(ViReliabilityLevel.UNRELIABLE))) {
            ViMemoryRegion dst = p.region(p.pdA, 16);
            p.connect();
            p.a.postSend(ViSendRequest.rdmaRead(1, 0, 1, dst.segment(0, 16)));
            assertEquals(ViStatus.NOT_SUPPORTED, p.sendA.poll().status());
        }
    }

    @Test
    void readResponsesInterleaveWithAnotherMessage() {
        VitcpConfig cfg = config(ViReliabilityLevel.RELIABLE_RECEPTION);
        try (ViPair p = new ViPair(cfg, cfg)) {
            ViMemoryRegion readSrc = p.region(p.pdB, 8 * MTU, ViAccess.RDMA_READ);
            ViMemoryRegion sendSrc = p.region(p.pdB, 8 * MTU);
            ViMemoryRegion readDst = p.region(p.pdA, 8 * MTU);
            ViMemoryRegion recvDst = p.region(p.pdA, 8 * MTU);
            byte[] readData = pattern(8 * MTU, 1);
            byte[] sendData = pattern(8 * MTU, 2);
            fill(readSrc, readData);
            fill(sendSrc, sendData);
            p.connect();
            p.pair.record(true);
            p.a.postRecv(ViRecvRequest.of(7, recvDst.all()));
            p.a.postSend(ViSendRequest.rdmaRead(1, readSrc.address(), readSrc.handle(), readDst.all()));
            p.pair.a().runPendingTasks();   // the Read Request is now on A's wire
            p.b.postSend(ViSendRequest.send(2, sendSrc.all())); // B's pump is queued, not yet run
            Object request;
            while ((request = p.pair.a().readOutbound()) != null) {
                p.pair.b().writeInbound(request); // B's read-complete pump sees the request and the Send together
            }
            p.pair.pump();
            assertEquals(ViStatus.SUCCESS, p.sendA.poll().status());
            assertEquals(ViStatus.SUCCESS, p.sendB.poll().status());
            assertEquals(ViStatus.SUCCESS, p.recvA.poll().status());
            assertArrayEquals(readData, read(readDst, 8 * MTU));
            assertArrayEquals(sendData, read(recvDst, 8 * MTU));
            // §2.2.2.2.3: Read Response segments (3) between segments of the Send (0) in B's stream
            StringBuilder types = new StringBuilder();
            for (String s : p.pair.bToA()) {
                int t = segmentType(s);
                if (t == 0 || t == 3) {
                    types.append(t);
                }
            }
            assertEquals("3030303030303030", types.toString());
        }
    }

    @Test
    void descriptorFlowControlHoldsAndReleasesSends() {
        VitcpConfig holder = VitcpConfig.builder().mtu(MTU).descriptorFlowControl(true).build();
        try (ViPair p = new ViPair(holder, config(ViReliabilityLevel.RELIABLE_DELIVERY))) {
            ViMemoryRegion src = p.region(p.pdA, 64);
            ViMemoryRegion dst = p.region(p.pdB, 3 * 64);
            p.b.postRecv(ViRecvRequest.of(100, dst.segment(0, 64))); // posted before connecting: in the CE segment
            p.connect();
            p.pair.record(true);
            for (int i = 1; i <= 3; i++) {
                p.a.postSend(ViSendRequest.send(i, src.segment(0, 64)));
            }
            p.pair.pump();
            // one descriptor was posted, so exactly one Send went out; two are held
            assertEquals(1, p.pair.aToB().stream().filter(s -> segmentType(s) == 0).count());
            assertEquals(100, p.recvB.poll().wrId());
            assertNull(p.recvB.poll());
            assertEquals(1, p.sendA.poll().wrId());
            assertNull(p.sendA.poll());
            // B posts one more: it tells A with a NOP (A set Descriptor Flow Control), one more Send is released
            p.b.postRecv(ViRecvRequest.of(101, dst.segment(64, 64)));
            p.pair.pump();
            assertTrue(p.pair.bToA().stream().anyMatch(s -> segmentType(s) == 4));
            assertEquals(101, p.recvB.poll().wrId());
            assertNull(p.recvB.poll());
            assertEquals(2, p.sendA.poll().wrId());
            p.b.postRecv(ViRecvRequest.of(102, dst.segment(128, 64)));
            p.pair.pump();
            assertEquals(102, p.recvB.poll().wrId());
            assertEquals(3, p.sendA.poll().wrId());
            assertEquals(3, p.pair.aToB().stream().filter(s -> segmentType(s) == 0).count());
            assertTrue(p.pair.a().isOpen());
        }
    }

    @Test
    void sendWithoutReceiveDescriptorIsADescriptorErrorInTheMessageAck() {
        VitcpConfig cfg = config(ViReliabilityLevel.RELIABLE_RECEPTION);
        try (ViPair p = new ViPair(cfg, cfg)) {
            ViMemoryRegion src = p.region(p.pdA, 64);
            p.connect();
            p.pair.record(true);
            p.a.postSend(ViSendRequest.send(1, src.segment(0, 64)));
            p.pair.pump();
            assertEquals(ViStatus.REMOTE_DESCRIPTOR_ERROR, p.sendA.poll().status());
            // the NOP: Message ACK = 1 (the message in error), Remote Error Code VDE = 0x0002
            String nop = p.pair.bToA().get(p.pair.bToA().size() - 1);
            assertEquals(4, segmentType(nop));
            assertEquals(1, hexInt(nop, 16));
            assertEquals("0002", nop.substring(44, 48));
            assertFalse(p.pair.a().isOpen());
            assertFalse(p.pair.b().isOpen());
        }
    }

    @Test
    void protectionErrorReportedInMessageAckAtReliableReception() {
        VitcpConfig cfg = config(ViReliabilityLevel.RELIABLE_RECEPTION);
        try (ViPair p = new ViPair(cfg, cfg)) {
            ViMemoryRegion src = p.region(p.pdA, 64);
            ViMemoryRegion readOnly = p.region(p.pdB, 32, ViAccess.RDMA_READ);
            ViMemoryRegion other = p.region(p.pdA, 64);
            p.connect();
            p.pair.record(true);
            fill(src, pattern(64, 9));
            p.a.postSend(ViSendRequest.send(0, src.segment(0, 0))); // message 1, needs a receive: post one first
            p.b.postRecv(ViRecvRequest.of(50, p.region(p.pdB, 1).segment(0, 0)));
            p.pair.pump();
            assertEquals(ViStatus.SUCCESS, p.sendA.poll().status());
            // message 2: RDMA Write into a region without RDMA Write access, message 3 queued behind it
            p.a.postSend(ViSendRequest.rdmaWrite(1, readOnly.address(), readOnly.handle(), src.segment(0, 16)));
            p.a.postSend(ViSendRequest.send(2, other.segment(0, 4)));
            p.pair.pump();
            assertEquals(new ViCompletion(1, ViOpcode.RDMA_WRITE, ViStatus.REMOTE_PROTECTION_ERROR, 0, 0, false),
                    p.sendA.poll());
            assertEquals(ViStatus.FLUSHED, p.sendA.poll().status());
            String nop = p.pair.bToA().get(p.pair.bToA().size() - 1);
            assertEquals(4, segmentType(nop));
            assertEquals(2, hexInt(nop, 16));         // Message ACK names message 2
            assertEquals("0001", nop.substring(44, 48)); // MPE
            // nothing was placed
            assertArrayEquals(new byte[32], read(readOnly, 32));
            assertFalse(p.pair.b().isOpen());
        }
    }

    @Test
    void outOfBoundsWriteIsRefusedAtEveryLevel() {
        for (ViReliabilityLevel level : ViReliabilityLevel.values()) {
            try (ViPair p = new ViPair(config(level), config(level))) {
                ViMemoryRegion src = p.region(p.pdA, 64);
                ViMemoryRegion dst = p.region(p.pdB, 32, ViAccess.RDMA_WRITE);
                ViMemoryRegion dst2 = p.region(p.pdB, 64, ViAccess.RDMA_WRITE);
                fill(src, pattern(64, 5));
                p.connect();
                p.a.postSend(ViSendRequest.rdmaWrite(1, dst.address() + 16, dst.handle(), src.segment(0, 32)));
                p.pair.pump();
                assertArrayEquals(new byte[64], read(dst2, 64), level.name());
                assertArrayEquals(new byte[32], read(dst, 32), level.name());
                if (level == ViReliabilityLevel.UNRELIABLE) {
                    // dropped, the VI continues
                    assertTrue(p.pair.b().isOpen());
                    p.a.postSend(ViSendRequest.rdmaWrite(2, dst2.address(), dst2.handle(), src.segment(0, 64)));
                    p.pair.pump();
                    assertArrayEquals(pattern(64, 5), read(dst2, 64));
                } else {
                    assertFalse(p.pair.b().isOpen(), level.name());
                }
            }
        }
    }

    /** Flips one payload octet of the first Send segment travelling A to B. */
    private static void corruptFirstSend(ViPair p) {
        boolean[] done = {false};
        p.pair.aToBFilter(buf -> {
            if (!done[0] && buf.readableBytes() > 24 && (buf.getByte(1) & 0x1F) == 0) {
                done[0] = true;
                ByteBuf copy = io.netty.buffer.Unpooled.copiedBuffer(buf);
                buf.release();
                copy.setByte(30, copy.getByte(30) ^ 0x40);
                return copy;
            }
            return buf;
        });
    }

    @ParameterizedTest
    @EnumSource(ViReliabilityLevel.class)
    void crcErrorPerReliabilityLevel(ViReliabilityLevel level) {
        VitcpConfig cfg = VitcpConfig.builder().reliabilityLevel(level).mtu(MTU).crcOption(true).build();
        try (ViPair p = new ViPair(cfg, cfg)) {
            ViMemoryRegion src = p.region(p.pdA, 100);
            ViMemoryRegion dst = p.region(p.pdB, 200);
            fill(src, pattern(100, 4));
            p.connect();
            assertTrue(p.a.connection().crcEnabled());
            p.pair.record(true);
            corruptFirstSend(p);
            p.b.postRecv(ViRecvRequest.of(1, dst.segment(0, 100)));
            p.b.postRecv(ViRecvRequest.of(2, dst.segment(100, 100)));
            p.a.postSend(ViSendRequest.send(1, src.segment(0, 100)));
            p.pair.pump();
            // §3.6 action 2: the data is delivered with status transport error
            ViCompletion r = p.recvB.poll();
            assertEquals(1, r.wrId());
            assertEquals(ViStatus.TRANSPORT_ERROR, r.status());
            switch (level) {
                case UNRELIABLE -> {
                    // the connection may continue
                    assertTrue(p.pair.a().isOpen() && p.pair.b().isOpen());
                    p.a.postSend(ViSendRequest.send(2, src.segment(0, 100)));
                    p.pair.pump();
                    assertEquals(new ViCompletion(2, ViOpcode.RECV, ViStatus.SUCCESS, 100, 0, false), p.recvB.poll());
                }
                case RELIABLE_DELIVERY -> {
                    assertFalse(p.pair.b().isOpen());
                    assertEquals(ViStatus.FLUSHED, p.recvB.poll().status());
                }
                case RELIABLE_RECEPTION -> {
                    // a Message ACK with Unrecoverable Transport Error, then close
                    String nop = p.pair.bToA().get(p.pair.bToA().size() - 1);
                    assertEquals(4, segmentType(nop));
                    assertEquals("0004", nop.substring(44, 48));
                    assertEquals(new ViCompletion(1, ViOpcode.SEND, ViStatus.TRANSPORT_ERROR, 0, 0, false),
                            p.sendA.poll());
                    assertFalse(p.pair.a().isOpen());
                    assertFalse(p.pair.b().isOpen());
                }
                default -> throw new AssertionError();
            }
        }
    }

    @Test
    void readWindowLimitsOutstandingReads() {
        VitcpConfig cfg = VitcpConfig.builder().mtu(MTU).rdmaReadWindow(1).build();
        try (ViPair p = new ViPair(cfg, VitcpConfig.builder().mtu(MTU).rdmaReadWindow(8).build())) {
            ViMemoryRegion src = p.region(p.pdB, 3 * MTU, ViAccess.RDMA_READ);
            ViMemoryRegion dst = p.region(p.pdA, 3 * MTU);
            fill(src, pattern(3 * MTU, 11));
            assertEquals(1, p.connect().rdmaReadWindow());
            p.pair.record(true);
            for (int i = 0; i < 3; i++) {
                p.a.postSend(ViSendRequest.rdmaRead(i, src.address() + i * MTU, src.handle(),
                        dst.segment(i * MTU, MTU)));
            }
            p.pair.a().runPendingTasks();
            // only one Read Request may be outstanding
            int requests = 0;
            Object m;
            List<Object> held = new ArrayList<>();
            while ((m = p.pair.a().readOutbound()) != null) {
                held.add(m);
                if ((((ByteBuf) m).getByte(1) & 0x1F) == 2) {
                    requests++;
                }
            }
            assertEquals(1, requests);
            for (Object o : held) {
                p.pair.b().writeInbound(o);
            }
            p.pair.pump();
            for (int i = 0; i < 3; i++) {
                assertEquals(i, p.sendA.poll().wrId());
            }
            assertArrayEquals(pattern(3 * MTU, 11), read(dst, 3 * MTU));
        }
    }

    @Test
    void transmitErrorWhenTheSourceRegionWentAway() {
        VitcpConfig cfg = config(ViReliabilityLevel.RELIABLE_DELIVERY);
        try (ViPair p = new ViPair(cfg, cfg)) {
            ByteBuf buf = io.netty.buffer.Unpooled.buffer(64, 64).writeZero(64);
            ViMemoryRegion src = p.pdA.register(buf, new ViAccess[0]);
            buf.release();
            ViMemoryRegion dst = p.region(p.pdB, 64);
            p.connect();
            p.b.postRecv(ViRecvRequest.of(1, dst.all()));
            p.a.postSend(ViSendRequest.send(1, src.segment(0, 64)));
            src.deregister(); // before the send is transmitted (its pump is still queued)
            p.pair.pump();
            // §2.2.2.2.5 / §3.2: padded, Transmit Error set, the receiver regards the message as in error
            assertEquals(ViStatus.TRANSMIT_ERROR, p.recvB.poll().status());
            assertEquals(ViStatus.TRANSMIT_ERROR, p.sendA.poll().status());
            assertTrue(p.pair.b().isOpen());
        }
    }

    @Test
    void disconnectFlushesOutstandingDescriptors() {
        VitcpConfig cfg = config(ViReliabilityLevel.RELIABLE_RECEPTION);
        try (ViPair p = new ViPair(cfg, cfg)) {
            ViMemoryRegion dst = p.region(p.pdB, 64);
            p.connect();
            p.b.postRecv(ViRecvRequest.of(1, dst.all()));
            p.pair.pump();
            p.a.disconnect();
            p.pair.pump();
            assertFalse(p.pair.b().isOpen());
            assertEquals(new ViCompletion(1, ViOpcode.RECV, ViStatus.FLUSHED, 0, 0, false), p.recvB.poll());
            assertFalse(p.b.isConnected());
        }
    }

    @Test
    void crcErrorInRdmaWriteOnUnreliableIsNotPlaced() {
        VitcpConfig cfg = VitcpConfig.builder().reliabilityLevel(ViReliabilityLevel.UNRELIABLE).mtu(MTU)
                .crcOption(true).build();
        try (ViPair p = new ViPair(cfg, cfg)) {
            ViMemoryRegion src = p.region(p.pdA, 64);
            ViMemoryRegion dst = p.region(p.pdB, 64, ViAccess.RDMA_WRITE);
            ViMemoryRegion imm = p.region(p.pdB, 1);
            fill(src, pattern(64, 8));
            p.connect();
            boolean[] done = {false};
            p.pair.aToBFilter(buf -> {
                if (!done[0] && (buf.getByte(1) & 0x1F) == 1) {
                    done[0] = true;
                    ByteBuf copy = io.netty.buffer.Unpooled.copiedBuffer(buf);
                    buf.release();
                    copy.setByte(50, copy.getByte(50) ^ 1); // a payload octet
                    return copy;
                }
                return buf;
            });
            p.b.postRecv(ViRecvRequest.of(1, imm.segment(0, 0)));
            p.a.postSend(ViSendRequest.rdmaWrite(1, dst.address(), dst.handle(), src.all()).withImmediate(3));
            p.pair.pump();
            // §3.6: the VI continues (Unreliable); the damaged write is not placed, its immediate data is in error
            assertArrayEquals(new byte[64], read(dst, 64));
            assertEquals(ViStatus.TRANSPORT_ERROR, p.recvB.poll().status());
            assertTrue(p.pair.b().isOpen());
            p.a.postSend(ViSendRequest.rdmaWrite(2, dst.address(), dst.handle(), src.all()));
            p.pair.pump();
            assertArrayEquals(pattern(64, 8), read(dst, 64));
        }
    }
}
