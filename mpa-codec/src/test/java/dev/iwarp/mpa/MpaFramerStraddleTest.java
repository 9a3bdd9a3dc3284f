package dev.iwarp.mpa;

import dev.iwarp.framing.UlpduSink;
import dev.iwarp.mpa.internal.FpduCumulation;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Small FPDUs after one that straddled two socket reads (FpduCumulator joins the reads as the parts of one
 * view): only the straddling FPDU is read through the view of both reads; the later ones of the second read are
 * decoded from that read's buffer. Counted as the ULPDUs the sink is lent as the view: with 1 KiB FPDUs nearly every
 * read ends inside an FPDU, so before, nearly every FPDU's header, CRC and payload copy went through the view.
 */
class MpaFramerStraddleTest {
    /** A 1 KiB RDMA Write's ULPDU: a 14-octet tagged header and 1024 octets (any content does here). */
    private static final int ULPDU = 14 + 1024;
    private static final int FPDUS = 40;

    @ParameterizedTest(name = "crc={0}")
    @ValueSource(booleans = {true, false})
    void onlyTheStraddlingFpduIsReadThroughTheViewOfBothReads(boolean crc) {
        byte[][] ulpdus = new byte[FPDUS][ULPDU];
        for (int i = 0; i < FPDUS; i++) {
            for (int j = 0; j < ULPDU; j++) {
                ulpdus[i][j] = (byte) (i * 31 + j);
            }
        }
        byte[] wire = FpduStreams.stream(crc, false, ulpdus);
        int fpdu = wire.length / FPDUS;
        int cut = FPDUS / 2 * fpdu + 7; // 7 octets into the 21st FPDU; both reads join the view as parts
        List<byte[]> got = new ArrayList<>();
        int[] lentAsView = {0};
        MpaFramer f = new MpaFramer(crc, false, false, 65535, 65535, false);
        EmbeddedChannel ch = new EmbeddedChannel(f);
        f.receiveWith(new UlpduSink() {
            @Override
            public int headerLength(int firstOctet) {
                return 14;
            }

            @Override
            public ByteBuf payloadDestination(ByteBuf ulpdu, int headerLength, int payloadLength) {
                return null;
            }

            @Override
            public void placed() {
            }

            @Override
            public void ulpdu(ByteBuf ulpdu) {
                if (ulpdu instanceof FpduCumulation) {
                    lentAsView[0]++;
                }
                got.add(ByteBufUtil.getBytes(ulpdu));
            }
        });
        ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, cut));
        ch.writeInbound(Unpooled.wrappedBuffer(wire, cut, wire.length - cut));
        assertEquals(FPDUS, got.size());
        for (int i = 0; i < FPDUS; i++) {
            assertArrayEquals(ulpdus[i], got.get(i), "ULPDU " + i);
        }
        assertEquals(1, lentAsView[0], "ULPDUs read through the view of both reads (the straddling one only)");
        assertFalse(ch.finishAndReleaseAll());
    }
}
