package dev.iwarp.rdmap;

import dev.iwarp.testkit.Hex;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

class RdmapOpcodeTest {

    /** RFC 5040 §4.2 and RFC 7306, one row per OpCode. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
            // opcode,                    value, tagged, QN, SE,    invalidate, single
            "RDMA_WRITE,                  0x0,   true,   -1, false, false,      false",
            "RDMA_READ_REQUEST,           0x1,   false,   1, false, false,      true",
            "RDMA_READ_RESPONSE,          0x2,   true,   -1, false, false,      false",
            "SEND,                        0x3,   false,   0, false, false,      false",
            "SEND_WITH_INVALIDATE,        0x4,   false,   0, false, true,       false",
            "SEND_WITH_SE,                0x5,   false,   0, true,  false,      false",
            "SEND_WITH_SE_AND_INVALIDATE, 0x6,   false,   0, true,  true,       false",
            "TERMINATE,                   0x7,   false,   2, false, false,      true",
            "IMMEDIATE_DATA,              0x8,   false,   0, false, false,      true",
            "IMMEDIATE_DATA_WITH_SE,      0x9,   false,   0, true,  false,      true",
            "ATOMIC_REQUEST,              0xA,   false,   1, false, false,      true",
            "ATOMIC_RESPONSE,             0xB,   false,   3, false, false,      true",
    })
    void messageTypeTable(RdmapOpcode op, String value, boolean tagged, int qn, boolean se, boolean invalidates,
                          boolean single) {
        assertEquals(Integer.decode(value), op.value());
        assertSame(op, RdmapOpcode.fromValue(Integer.decode(value)));
        assertEquals(tagged, op.tagged());
        assertEquals(qn, op.queueNumber());
        assertEquals(se, op.solicitedEvent());
        assertEquals(invalidates, op.invalidates());
        assertEquals(single, op.singleSegment());
    }

    @Test
    void reservedOpcodesHaveNoType() {
        for (int v = 0xC; v <= 0xF; v++) {
            assertNull(RdmapOpcode.fromValue(v), "OpCode " + v);
        }
        assertNull(RdmapOpcode.fromValue(-1));
        assertNull(RdmapOpcode.fromValue(0x10));
    }

    @Test
    void controlOctetFields() {
        // RFC 5040 §4.1: RV 0xC0, Rsv 0x30, OpCode 0x0F
        assertEquals(0x47, RdmapControl.encode(RdmapControl.RDMAP_VERSION_1, 7));
        assertEquals(0x4B, RdmapControl.encode(RdmapOpcode.ATOMIC_RESPONSE));
        assertEquals(0x03, RdmapControl.encode(0, 3), "RDMAC version 0");
        assertEquals(1, RdmapControl.version(0x7A), "Rsv bits do not leak into RV");
        assertEquals(0xA, RdmapControl.opcode(0x7A));
        assertEquals(3, RdmapControl.version(0xC2));
        assertEquals(2, RdmapControl.opcode(0xC2));
    }

    /** The first two octets of each RFC 5040 §4.2 message type, from the segments RdmapSegments builds. */
    @Test
    void firstTwoOctetsOfEveryMessage() {
        ByteBufAllocator a = ByteBufAllocator.DEFAULT;
        ReadRequestHeader rr = new ReadRequestHeader(1, 2, 3, 4, 5);
        assertFirstTwo("c1 40", RdmapSegments.rdmaWrite(true, 1, 0, Unpooled.EMPTY_BUFFER));
        assertFirstTwo("81 40", RdmapSegments.rdmaWrite(false, 1, 0, Unpooled.EMPTY_BUFFER));
        assertFirstTwo("41 41", RdmapSegments.readRequest(1, rr, a));
        assertFirstTwo("c1 42", RdmapSegments.readResponse(true, 1, 0, Unpooled.EMPTY_BUFFER));
        assertFirstTwo("81 42", RdmapSegments.readResponse(false, 1, 0, Unpooled.EMPTY_BUFFER));
        assertFirstTwo("41 43", RdmapSegments.send(1, 0, true, Unpooled.EMPTY_BUFFER));
        assertFirstTwo("01 43", RdmapSegments.send(1, 0, false, Unpooled.EMPTY_BUFFER));
        assertFirstTwo("41 44", RdmapSegments.send(RdmapOpcode.SEND_WITH_INVALIDATE, 9, 1, 0, true, Unpooled.EMPTY_BUFFER));
        assertFirstTwo("01 45", RdmapSegments.send(RdmapOpcode.SEND_WITH_SE, 0, 1, 0, false, Unpooled.EMPTY_BUFFER));
        assertFirstTwo("41 46", RdmapSegments.send(RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE, 9, 1, 0, true,
                Unpooled.EMPTY_BUFFER));
        assertFirstTwo("41 47", RdmapSegments.terminate(
                TerminateMessage.forError(TerminateCause.ofMpa(2), null, null), a));
        assertFirstTwo("41 48", RdmapSegments.immediateData(1, false, new ImmediateData(1), a));
        assertFirstTwo("41 49", RdmapSegments.immediateData(1, true, new ImmediateData(1), a));
        assertFirstTwo("41 4a", RdmapSegments.atomicRequest(1, AtomicRequestHeader.swap(1, 2, 8, 3, -1), a));
        assertFirstTwo("41 4b", RdmapSegments.atomicResponse(1, new AtomicResponseHeader(1, 2), a));
    }

    private static void assertFirstTwo(String hex, dev.iwarp.ddp.DdpSegment segment) {
        assertArrayEquals(Hex.parse(hex), Arrays.copyOf(UlpduOctets.ulpdu(segment), 2));
    }
}
