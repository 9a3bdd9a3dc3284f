package dev.iwarp.rdmap;

import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.testkit.Hex;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** RFC 7306 headers, byte vectors written out from the field layout. */
class Rfc7306Test {
    static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    @Test
    void immediateData() {
        byte[] wire = Hex.parse("""
                41 48 00000000 00000000 00000007 00000000   // Immediate Data, QN 0, MSN 7, MO 0
                01 23 45 67 89 ab cd ef                     // Immediate Data""");
        assertArrayEquals(wire, UlpduOctets.ulpdu(RdmapSegments.immediateData(7, false,
                new ImmediateData(0x0123456789abcdefL), ALLOC)));
        assertEquals(new ImmediateData(0x0123456789abcdefL),
                ImmediateData.decode(Unpooled.wrappedBuffer(wire), 18));
        assertEquals(8, ImmediateData.LENGTH);
    }

    static final String COMPARE_SWAP_PAYLOAD = """
            0000000 2                  // Reserved (28) | AtomOp 0010b CmpSwap
            a1b2c3d4                   // Request Identifier
            00 12 ab 00                // Remote STag
            0000 7f00 1122 3348        // Remote Tagged Offset
            1111 1111 2222 2222        // Swap Data
            ffff ffff 0000 0000        // Swap Mask
            0000 0000 dead beef        // Compare Data
            0000 0000 ffff ffff        // Compare Mask""";

    @Test
    void atomicRequestCompareSwap() {
        AtomicRequestHeader h = AtomicRequestHeader.compareSwap(0xa1b2c3d4, 0x0012ab00, 0x00007f0011223348L,
                0xdeadbeefL, 0xffffffffL, 0x1111111122222222L, 0xffffffff00000000L);
        byte[] wire = Hex.parse("41 4a 00000000 00000001 00000003 00000000" + COMPARE_SWAP_PAYLOAD);
        assertEquals(18 + 52, wire.length, "ULPDU_Length 70");
        assertArrayEquals(wire, UlpduOctets.ulpdu(RdmapSegments.atomicRequest(3, h, ALLOC)));
        AtomicRequestHeader back = AtomicRequestHeader.decode(Unpooled.wrappedBuffer(wire), 18);
        assertEquals(h, back);
        assertSame(AtomicOp.COMPARE_SWAP, back.operation());
        assertEquals(0xa1b2c3d4, back.requestId());
        assertEquals(0x0012ab00, back.remoteStag());
        assertEquals(0x00007f0011223348L, back.remoteTo());
        assertEquals(0x1111111122222222L, back.addOrSwapData());
        assertEquals(0xffffffff00000000L, back.addOrSwapMask());
        assertEquals(0xdeadbeefL, back.compareData());
        assertEquals(0xffffffffL, back.compareMask());
    }

    @Test
    void atomicRequestFetchAddAndSwap() {
        byte[] fetchAdd = Hex.parse("""
                00000000 00000001 00000002 0000000000000008
                0000000100000001 8000000080000000 0000000000000000 0000000000000000""");
        assertArrayEquals(fetchAdd, encode(AtomicRequestHeader.fetchAdd(1, 2, 8, 0x0000000100000001L,
                0x8000000080000000L)));
        byte[] swap = Hex.parse("""
                00000001 ffffffff 00000002 0000000000000010
                0123456789abcdef ffffffffffffffff 0000000000000000 0000000000000000""");
        assertArrayEquals(swap, encode(AtomicRequestHeader.swap(-1, 2, 16, 0x0123456789abcdefL, -1L)));
        assertSame(AtomicOp.SWAP, AtomicRequestHeader.decode(Unpooled.wrappedBuffer(swap), 0).operation());
    }

    @Test
    void reservedAtomOpIsKeptAndReservedBitsIgnored() {
        byte[] wire = Hex.parse("fffffff7 00000001 00000002 0000000000000008" + "00".repeat(32));
        AtomicRequestHeader h = AtomicRequestHeader.decode(Unpooled.wrappedBuffer(wire), 0);
        assertEquals(7, h.atomOp());
        assertNull(h.operation());
        assertThrows(IllegalStateException.class, () -> h.apply(0));
        assertNull(AtomicOp.fromValue(3));
        assertThrows(IllegalArgumentException.class, () -> new AtomicRequestHeader(16, 0, 0, 0, 0, 0, 0, 0));
    }

    @Test
    void atomicResponse() {
        byte[] wire = Hex.parse("""
                41 4b 00000000 00000003 00000009 00000000   // Atomic Response, QN 3, MSN 9, MO 0
                a1b2c3d4                                    // Original Request Identifier
                fedcba98 76543210                           // Original Remote Data Value""");
        assertEquals(30, wire.length, "ULPDU_Length 30");
        AtomicResponseHeader h = new AtomicResponseHeader(0xa1b2c3d4, 0xfedcba9876543210L);
        assertArrayEquals(wire, UlpduOctets.ulpdu(RdmapSegments.atomicResponse(9, h, ALLOC)));
        assertEquals(h, AtomicResponseHeader.decode(Unpooled.wrappedBuffer(wire), 18));
    }

    @Test
    void applyUsesTheRequestFields() {
        long original = 0x00000000ffffffffL;
        assertEquals(0x0000000100000000L,
                AtomicRequestHeader.fetchAdd(1, 2, 8, 0x0000000100000001L, 0x8000000080000000L).apply(original));
        assertEquals(0x1111111100000000L + 0xffffffffL, AtomicRequestHeader.compareSwap(1, 2, 8, 0xffffffffL,
                0xffffffffL, 0x1111111122222222L, 0xffffffff00000000L).apply(original));
        assertEquals(original, AtomicRequestHeader.compareSwap(1, 2, 8, 0xfffffffeL,
                0xffffffffL, 0x1111111122222222L, -1L).apply(original));
    }

    private static byte[] encode(AtomicRequestHeader h) {
        ByteBuf b = Unpooled.buffer();
        h.encode(b);
        assertEquals(AtomicRequestHeader.LENGTH, b.readableBytes());
        return Arrays.copyOf(b.array(), b.readableBytes());
    }

    @Test
    void segmentsAreSingleAndOnTheirQueues() {
        DdpSegment req = RdmapSegments.atomicRequest(1, AtomicRequestHeader.fetchAdd(1, 2, 8, 1, 0), ALLOC);
        DdpSegment resp = RdmapSegments.atomicResponse(1, new AtomicResponseHeader(1, 2), ALLOC);
        try {
            assertEquals(AtomicRequestHeader.LENGTH, req.payloadLength());
            assertEquals(AtomicResponseHeader.LENGTH, resp.payloadLength());
        } finally {
            req.release();
            resp.release();
        }
    }
}
