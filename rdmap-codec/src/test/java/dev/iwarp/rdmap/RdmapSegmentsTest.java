package dev.iwarp.rdmap;

import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.testkit.Hex;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class RdmapSegmentsTest {
    static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    @Test
    void describeReadRequest() {
        assertDescribe("RDMA Read Request L QN 1 MSN 1 MO 0 len 28: sink STag 0x0034cd00 TO 0x00007f0011223340"
                        + " size 64 source STag 0x0012ab00 TO 0x000055d5c0a0b2a0",
                RdmapSegments.readRequest(1, SiwKnownAnswers.READ_REQUEST, ALLOC));
    }

    @Test
    void describeTaggedAndSends() {
        assertDescribe("RDMA Write STag 0x0012ab00 TO 0x0000000000001000 len 3",
                RdmapSegments.rdmaWrite(false, 0x0012ab00, 0x1000, Unpooled.wrappedBuffer(new byte[3])));
        assertDescribe("RDMA Read Response L STag 0x00000007 TO 0xffffffffffffffff len 0",
                RdmapSegments.readResponse(true, 7, -1, Unpooled.EMPTY_BUFFER));
        assertDescribe("Send with SE and Invalidate L QN 0 MSN 4294967295 MO 16 len 2 invalidate STag 0x8f0fad00",
                RdmapSegments.send(RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE, 0x8f0fad00, -1, 16, true,
                        Unpooled.wrappedBuffer(new byte[2])));
    }

    @Test
    void describeRfc7306AndTerminate() {
        assertDescribe("Immediate Data with SE L QN 0 MSN 2 MO 0 len 8: immediate 0x0123456789abcdef",
                RdmapSegments.immediateData(2, true, new ImmediateData(0x0123456789abcdefL), ALLOC));
        assertDescribe("Atomic Response L QN 3 MSN 5 MO 0 len 12: request id 9 original 0x0000000000000010",
                RdmapSegments.atomicResponse(5, new AtomicResponseHeader(9, 16), ALLOC));
        assertDescribe("Atomic Request L QN 1 MSN 1 MO 0 len 52: FETCH_ADD request id 1 STag 0x00000002"
                        + " TO 0x0000000000000008 data 0x0000000000000001 mask 0x0000000000000000"
                        + " compare 0x0000000000000000 compare mask 0x0000000000000000",
                RdmapSegments.atomicRequest(1, AtomicRequestHeader.fetchAdd(1, 2, 8, 1, 0), ALLOC));
        assertDescribe("Terminate L QN 2 MSN 1 MO 0 len 4: Terminate LLP 2/0/0x02 MPA error: MPA CRC error"
                        + " [raw 20020000]",
                RdmapSegments.terminate(TerminateMessage.forError(TerminateCause.ofMpa(2), null, null), ALLOC));
    }

    @Test
    void describeNeverThrowsOnMalformedSegments() {
        // Read Request with a 4-octet payload, RDMAP version 0, DDP version 0
        assertDescribe("RDMA Read Request DV 0 RV 0 L QN 1 MSN 1 MO 0 len 4 (too short for its RDMAP header)",
                new DdpUntaggedSegment(true, 0, 0x01, 0, 1, 1, 0, Unpooled.wrappedBuffer(new byte[4])));
        assertDescribe("reserved OpCode 0xc L QN 0 MSN 1 MO 0 len 0",
                new DdpUntaggedSegment(true, 0x4C, 0, 0, 1, 0, Unpooled.EMPTY_BUFFER));
        assertDescribe("Send STag 0x00000001 TO 0x0000000000000000 len 0 (tagged, expected untagged)",
                new DdpTaggedSegment(false, 0x43, 1, 0, Unpooled.EMPTY_BUFFER));
        assertDescribe("RDMA Write L QN 0 MSN 1 MO 0 len 0 (untagged, expected tagged)",
                new DdpUntaggedSegment(true, 0x40, 0, 0, 1, 0, Unpooled.EMPTY_BUFFER));
        assertDescribe("Terminate L QN 2 MSN 1 MO 0 len 2 (too short for its RDMAP header)",
                new DdpUntaggedSegment(true, 0x47, 0, 2, 1, 0, Unpooled.wrappedBuffer(new byte[2])));
    }

    @Test
    void sendRejectsNonSendOpcodesAndStrayInvalidateStags() {
        assertThrows(IllegalArgumentException.class,
                () -> RdmapSegments.send(RdmapOpcode.IMMEDIATE_DATA, 0, 1, 0, true, Unpooled.EMPTY_BUFFER));
        assertThrows(IllegalArgumentException.class,
                () -> RdmapSegments.send(RdmapOpcode.RDMA_WRITE, 0, 1, 0, true, Unpooled.EMPTY_BUFFER));
        assertThrows(IllegalArgumentException.class,
                () -> RdmapSegments.send(RdmapOpcode.SEND, 5, 1, 0, true, Unpooled.EMPTY_BUFFER));
    }

    @Test
    void sendWithInvalidateCarriesTheStagInRsvdUlp() {
        DdpSegment s = RdmapSegments.send(RdmapOpcode.SEND_WITH_INVALIDATE, 0x8f0fad00, 3, 0, true,
                Unpooled.EMPTY_BUFFER);
        assertArrayEquals(Hex.parse("41 44 8f 0f ad 00 00000000 00000003 00000000"), UlpduOctets.ulpdu(s));
    }

    @Test
    void opcodeOfReservedValueIsNull() {
        DdpSegment s = new DdpUntaggedSegment(true, 0x4F, 0, 0, 1, 0, Unpooled.EMPTY_BUFFER);
        assertNull(RdmapSegments.opcode(s));
        s.release();
    }

    private static void assertDescribe(String expected, DdpSegment segment) {
        try {
            assertEquals(expected, RdmapSegments.describe(segment));
        } finally {
            segment.release();
        }
    }
}
