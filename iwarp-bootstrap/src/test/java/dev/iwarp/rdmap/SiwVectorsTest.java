package dev.iwarp.rdmap;

import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.testkit.Hex;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The byte-exact FPDUs Linux siw builds (siw_qp_tx.c; its Terminate, siw_qp.c): we build each through DdpCodec and MpaFramer
 * and must produce the same octets (CRC included), and we decode siw's octets to the same fields.
 */
class SiwVectorsTest {
    static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    static final String READ_REQUEST_FPDU = """
            00 2e 41 41 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00 00
            00 34 cd 00 00 00 7f 00 11 22 33 40 00 00 00 40 00 12 ab 00
            00 00 55 d5 c0 a0 b2 a0 81 35 1c e8""";
    static final ReadRequestHeader READ_REQUEST = new ReadRequestHeader(0x0034cd00, 0x00007f0011223340L, 64,
            0x0012ab00, 0x000055d5c0a0b2a0L);

    @Test
    void readRequestFpdu() {
        assertArrayEquals(Hex.parse(READ_REQUEST_FPDU), FpduOctets.fpdu(RdmapSegments.readRequest(1, READ_REQUEST, ALLOC), true));

        DdpSegment s = FpduOctets.decode(FpduOctets.ulpduOfFpdu(Hex.parse(READ_REQUEST_FPDU)));
        try {
            DdpUntaggedSegment u = assertInstanceOf(DdpUntaggedSegment.class, s);
            assertSame(RdmapOpcode.RDMA_READ_REQUEST, RdmapSegments.opcode(u));
            assertEquals(RdmapControl.RDMAP_VERSION_1, RdmapControl.version(u.rsvdUlp()));
            assertEquals(1, u.qn());
            assertEquals(1, u.msn());
            assertEquals(0, u.mo());
            assertEquals(ReadRequestHeader.LENGTH, u.payloadLength());
            ReadRequestHeader h = ReadRequestHeader.decode(u.payload(), u.payload().readerIndex());
            assertEquals(READ_REQUEST, h);
            assertEquals(0x0034cd00, h.sinkStag());
            assertEquals(0x00007f0011223340L, h.sinkTo());
            assertEquals(64, h.size());
            assertEquals(0x0012ab00, h.sourceStag());
            assertEquals(0x000055d5c0a0b2a0L, h.sourceTo());
        } finally {
            s.release();
        }
    }

    @Test
    void readResponseFpdu() {
        byte[] data = new byte[64];
        Arrays.fill(data, (byte) 0x41);
        byte[] fpdu = FpduOctets.fpdu(RdmapSegments.readResponse(true, READ_REQUEST.sinkStag(), READ_REQUEST.sinkTo(),
                Unpooled.wrappedBuffer(data)), true);
        assertEquals(84, fpdu.length);
        assertArrayEquals(Hex.parse("00 4e c1 42 00 34 cd 00 00 00 7f 00 11 22 33 40 41 41"), Arrays.copyOf(fpdu, 18));
        assertArrayEquals(Hex.parse("64 03 3e 57"), Arrays.copyOfRange(fpdu, 80, 84));
    }

    @Test
    void rpingClientFirstSend() {
        byte[] advert = Hex.parse("00 00 55 d5 c0 a0 b2 a0 00 12 ab 00 00 00 00 40");
        assertArrayEquals(Hex.parse("""
                        00 22 41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00
                        00 00 55 d5 c0 a0 b2 a0 00 12 ab 00 00 00 00 40 da f3 85 ef"""),
                FpduOctets.fpdu(RdmapSegments.send(1, 0, true, Unpooled.wrappedBuffer(advert)), true));
    }

    @Test
    void zeroLengthReadRtrRequest() {
        String fpdu = """
                00 2e 41 41 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00 00
                00 00 00 00  00 00 00 00 00 00 00 00  00 00 00 00  00 00 00 01  00 00 00 00 00 00 00 00
                00 00 00 00""";
        ReadRequestHeader rtr = new ReadRequestHeader(0, 0, 0, 1, 0);
        assertArrayEquals(Hex.parse(fpdu), FpduOctets.fpdu(RdmapSegments.readRequest(1, rtr, ALLOC), false));
        DdpSegment s = FpduOctets.decode(FpduOctets.ulpduOfFpdu(Hex.parse(fpdu)));
        try {
            assertSame(RdmapOpcode.RDMA_READ_REQUEST, RdmapSegments.opcode(s));
            assertEquals(rtr, ReadRequestHeader.decode(s.payload(), s.payload().readerIndex()));
        } finally {
            s.release();
        }
    }

    @Test
    void zeroLengthWriteRtr() {
        String fpdu = "00 0e c1 40 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00";
        assertArrayEquals(Hex.parse(fpdu), FpduOctets.fpdu(RdmapSegments.rdmaWrite(true, 1, 0, Unpooled.EMPTY_BUFFER), false));
        DdpSegment s = FpduOctets.decode(FpduOctets.ulpduOfFpdu(Hex.parse(fpdu)));
        try {
            DdpTaggedSegment t = assertInstanceOf(DdpTaggedSegment.class, s);
            assertSame(RdmapOpcode.RDMA_WRITE, RdmapSegments.opcode(t));
            assertTrue(t.isLast());
            assertEquals(1, t.stag());
            assertEquals(0, t.to());
            assertEquals(0, t.payloadLength());
        } finally {
            s.release();
        }
    }

    /** siw_qp.c: siw's CRC-error Terminate, control word in siw's little-endian bit order. */
    @Test
    void siwCrcErrorTerminate() {
        byte[] fpdu = Hex.parse("00 16 41 47 00 00 00 00 00 00 00 02 00 00 00 01 00 00 00 00 02 02 00 00 00 00 00 00");
        DdpSegment s = FpduOctets.decode(FpduOctets.ulpduOfFpdu(fpdu));
        try {
            DdpUntaggedSegment u = assertInstanceOf(DdpUntaggedSegment.class, s);
            assertSame(RdmapOpcode.TERMINATE, RdmapSegments.opcode(u));
            assertEquals(2, u.qn());
            assertEquals(TerminateMessage.MSN, u.msn());
            assertEquals(0, u.mo());

            TerminateMessage rfc = TerminateMessage.decode(u.payload());
            assertEquals(new TerminateCause(0, 2, 0x02), rfc.cause(), "as the RFC reads it (Wireshark's reading)");
            assertFalse(rfc.cause().registered());
            assertEquals(0x02020000, rfc.rawControl());
            assertTrue(rfc.siwByteOrderSuspected());

            TerminateMessage siw = rfc.asSiwOrder();
            assertEquals(TerminateCause.ofMpa(2), siw.cause());
            assertEquals(new TerminateCause(2, 0, 2), siw.cause());
            assertFalse(siw.m() || siw.d() || siw.r());
            assertEquals(-1, siw.ddpSegmentLength());
            assertNull(siw.terminatedDdpHeader());
            assertEquals(siw, TerminateMessage.decodeSiwOrder(u.payload()));
            assertEquals("Terminate (siw bit order) LLP 2/0/0x02 MPA error: MPA CRC error [raw 02020000];"
                    + " in RFC order it would read RDMAP 0/2/0x02 remote operation error: (unregistered) [raw 02020000]",
                    rfc.describe());
        } finally {
            s.release();
        }
    }

    /** What we send for the same error: RFC bit order, 20 02 00 00. */
    @Test
    void ourCrcErrorTerminate() {
        TerminateMessage t = TerminateMessage.forError(TerminateCause.ofMpa(2), null, null);
        assertArrayEquals(Hex.parse("00 16 41 47 00 00 00 00 00 00 00 02 00 00 00 01 00 00 00 00 20 02 00 00 00 00 00 00"),
                FpduOctets.fpdu(t.toSegment(ALLOC), false));
        assertFalse(t.siwByteOrderSuspected());
    }
}
