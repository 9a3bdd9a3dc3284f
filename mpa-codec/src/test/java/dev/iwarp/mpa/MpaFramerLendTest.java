package dev.iwarp.mpa;

import dev.iwarp.testkit.Hex;
import dev.iwarp.testkit.Splits;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static dev.iwarp.mpa.MpaFramerTest.SIW_READ_REQUEST;
import static dev.iwarp.mpa.MpaFramerTest.SIW_SEND;
import static dev.iwarp.mpa.MpaFramerTest.concat;
import static dev.iwarp.mpa.MpaFramerTest.randomBytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ULPDUs lent as the received buffer itself ({@link MpaFramer#lendUlpdus()}): the same octets
 * as the slices they replace, at every split of the input, no object of their own, CRC still checked
 * before anything passes up, and refused where markers would split a ULPDU.
 */
class MpaFramerLendTest {
    // siw_qp_tx.c: FPDUs as siw builds them, CRC on, no markers
    static final byte[] SEND_FPDU = concat(SIW_SEND, Hex.parse("da f3 85 ef"));
    static final byte[] SEND_ULPDU = Arrays.copyOfRange(SIW_SEND, 2, SIW_SEND.length);
    static final byte[] READ_FPDU = concat(SIW_READ_REQUEST, Hex.parse("81 35 1c e8"));
    static final byte[] READ_ULPDU = Arrays.copyOfRange(SIW_READ_REQUEST, 2, SIW_READ_REQUEST.length);

    /** Copies each ULPDU within its channelRead, as a lent buffer must be read, and releases it. */
    private static final class Reader extends ChannelInboundHandlerAdapter {
        final List<byte[]> ulpdus = new ArrayList<>();
        final List<ByteBuf> buffers = new ArrayList<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            ulpdus.add(ByteBufUtil.getBytes(b));
            buffers.add(b);
            b.release();
        }
    }

    private static MpaFramer lending(boolean crc, boolean holdTx) {
        MpaFramer f = new MpaFramer(crc, false, false, 0xFFFF, 1454, holdTx);
        assertTrue(f.lendUlpdus());
        assertTrue(f.lendsUlpdus());
        return f;
    }

    @Test
    void siwFpdusAtEverySplitGiveTheSameUlpdus() {
        byte[] stream = concat(SEND_FPDU, READ_FPDU);
        Splits.forEachSplit(stream, pieces -> {
            Reader r = new Reader();
            EmbeddedChannel ch = new EmbeddedChannel(lending(true, false), r);
            for (ByteBuf piece : pieces) {
                ch.writeInbound(piece);
            }
            assertEquals(2, r.ulpdus.size(), "ULPDUs for split " + pieces.size());
            assertArrayEquals(SEND_ULPDU, r.ulpdus.get(0));
            assertArrayEquals(READ_ULPDU, r.ulpdus.get(1));
            assertFalse(ch.finish());
        });
    }

    @Test
    void fpdusOfOneReadPassUpAsThatVeryBufferWithoutAnObjectOfTheirOwn() {
        Reader r = new Reader();
        EmbeddedChannel ch = new EmbeddedChannel(lending(true, false), r);
        ByteBuf read = Unpooled.wrappedBuffer(concat(SEND_FPDU, READ_FPDU));
        ch.writeInbound(read);
        assertSame(read, r.buffers.get(0));
        assertSame(read, r.buffers.get(1));
        assertEquals(0, read.refCnt(), "every reference given back once the read was consumed");
        assertFalse(ch.finish());
    }

    @ParameterizedTest(name = "crc={0}")
    @ValueSource(booleans = {true, false})
    void aLongRandomStreamInRandomPiecesGivesTheSameUlpdus(boolean crc) {
        Random rnd = new Random(13);
        List<byte[]> ulpdus = new ArrayList<>();
        for (int s : new int[] {0, 1, 2, 3, 4, 5, 482, 4096, 64768}) {
            ulpdus.add(randomBytes(rnd, s));
        }
        for (int i = 0; i < 150; i++) {
            ulpdus.add(randomBytes(rnd, rnd.nextInt(i % 10 == 0 ? 9000 : 700)));
        }
        byte[] stream = new MpaFramerTest.ReferenceBytes(false, crc).of(ulpdus.toArray(new byte[0][]));
        for (int round = 0; round < 10; round++) {
            Reader r = new Reader();
            EmbeddedChannel rx = new EmbeddedChannel(lending(crc, false), r);
            int i = 0;
            while (i < stream.length) {
                // short reads are copied into the cumulation, long ones join it as components
                int n = Math.min(stream.length - i, 1 + rnd.nextInt(round < 5 ? 40 : 20000));
                rx.writeInbound(Unpooled.wrappedBuffer(stream, i, n));
                i += n;
            }
            assertEquals(ulpdus.size(), r.ulpdus.size());
            for (int k = 0; k < ulpdus.size(); k++) {
                assertArrayEquals(ulpdus.get(k), r.ulpdus.get(k), "ULPDU " + k);
            }
            assertFalse(rx.finish());
        }
    }

    /**
     * FPDUs of 64 KiB in reads of 60,000 octets, as a bulk transfer arrives: every FPDU straddles two reads and
     * passes up as the framer's one cumulation of those reads, taken again for each; no read is copied and
     * every read is given back.
     */
    @ParameterizedTest(name = "crc={0}")
    @ValueSource(booleans = {true, false})
    void fpdusStraddlingReadsPassUpAsOneReusedCumulationOfTheReads(boolean crc) {
        Random rnd = new Random(17);
        byte[][] ulpdus = new byte[40][];
        for (int i = 0; i < ulpdus.length; i++) {
            ulpdus[i] = randomBytes(rnd, 64768);
        }
        byte[] stream = new MpaFramerTest.ReferenceBytes(false, crc).of(ulpdus);
        Reader r = new Reader();
        EmbeddedChannel ch = new EmbeddedChannel(lending(crc, false), r);
        List<ByteBuf> reads = new ArrayList<>();
        for (int i = 0; i < stream.length; i += 60_000) {
            ByteBuf read = io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer(60_000)
                    .writeBytes(stream, i, Math.min(60_000, stream.length - i));
            reads.add(read);
            ch.writeInbound(read);
        }
        assertEquals(ulpdus.length, r.ulpdus.size());
        for (int k = 0; k < ulpdus.length; k++) {
            assertArrayEquals(ulpdus[k], r.ulpdus.get(k), "ULPDU " + k);
        }
        ByteBuf cumulation = r.buffers.get(0);
        assertTrue(cumulation instanceof FpduCumulation, "a straddling FPDU passes up as " + cumulation);
        for (ByteBuf b : r.buffers) {
            assertSame(cumulation, b, "each straddle takes the framer's cumulation again");
        }
        for (ByteBuf read : reads) {
            assertEquals(0, read.refCnt(), "every read given back");
        }
        assertFalse(ch.finish());
    }

    @Test
    void aBadCrcIsError2AndNothingPassesUp() {
        byte[] bad = concat(SEND_FPDU, READ_FPDU);
        bad[SEND_FPDU.length + 10] ^= 1;
        Reader r = new Reader();
        EmbeddedChannel ch = new EmbeddedChannel(lending(true, false), r);
        MpaException e = assertThrows(MpaException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(bad)));
        assertEquals(MpaErrorCode.CRC_ERROR, e.errorCode());
        assertEquals(1, r.ulpdus.size(), "only the FPDU before the bad one");
        assertArrayEquals(SEND_ULPDU, r.ulpdus.get(0));
        ch.writeInbound(Unpooled.wrappedBuffer(SEND_FPDU));
        assertEquals(1, r.ulpdus.size(), "RFC 5044 §8: nothing more on this half connection");
        assertFalse(ch.finish());
    }

    @Test
    void whileRule4HoldsWritesTheFirstUlpduIsItsOwnSliceAndLaterOnesAreLent() {
        Reader r = new Reader();
        EmbeddedChannel ch = new EmbeddedChannel(lending(true, true), r);
        ch.writeOutbound(Unpooled.wrappedBuffer(READ_ULPDU));
        assertTrue(ch.outboundMessages().isEmpty(), "RFC 5044 §7.1.2 rule 4: held until an FPDU arrived");
        ByteBuf read = Unpooled.wrappedBuffer(concat(SEND_FPDU, READ_FPDU));
        ch.writeInbound(read);
        assertNotSame(read, r.buffers.get(0), "the held writes go before anything the first ULPDU causes");
        assertSame(read, r.buffers.get(1));
        assertFalse(ch.outboundMessages().isEmpty());
        ch.finishAndReleaseAll();
    }

    /**
     * With inbound markers a ULPDU that a marker splits passes up as the reader's view of its pieces over the
     * received octets (no copy, no slice per piece), the same view again once the previous ULPDU was released.
     */
    @Test
    void aUlpduSplitByMarkersIsAViewOfItsPiecesTakenAgainOnceReleased() {
        Random rnd = new Random(23);
        byte[][] ulpdus = new byte[12][];
        for (int i = 0; i < ulpdus.length; i++) {
            ulpdus[i] = randomBytes(rnd, i % 3 == 0 ? 64768 : 1000 + rnd.nextInt(3000));
        }
        byte[] stream = new MpaFramerTest.ReferenceBytes(true, true).of(ulpdus);
        Reader r = new Reader();
        EmbeddedChannel ch = new EmbeddedChannel(new MpaFramer(true, false, true, 0xFFFF, 1454, false), r);
        ByteBuf read = io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer(stream.length).writeBytes(stream);
        ch.writeInbound(read);
        assertEquals(ulpdus.length, r.ulpdus.size());
        FpduCumulation view = null;
        for (int k = 0; k < ulpdus.length; k++) {
            assertArrayEquals(ulpdus[k], r.ulpdus.get(k), "ULPDU " + k);
            if (r.buffers.get(k) instanceof FpduCumulation) {
                FpduCumulation pieces = (FpduCumulation) r.buffers.get(k);
                if (view == null) {
                    view = pieces;
                }
                assertSame(view, pieces, "ULPDU " + k + " takes the released view again");
            }
        }
        assertTrue(view != null, "64768-octet ULPDUs span markers");
        assertEquals(0, read.refCnt(), "each piece's reference given back");
        assertFalse(ch.finish());
    }

    @Test
    void inboundMarkersRefuseLending() {
        MpaFramer f = new MpaFramer(true, false, true, 0xFFFF, 1454, false);
        assertFalse(f.lendUlpdus());
        assertFalse(f.lendsUlpdus());
    }
}
