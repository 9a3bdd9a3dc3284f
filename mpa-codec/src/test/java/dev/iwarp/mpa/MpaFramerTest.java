package dev.iwarp.mpa;

import dev.iwarp.testkit.ChannelOctets;
import dev.iwarp.framing.Crc32c;
import dev.iwarp.testkit.Hex;
import dev.iwarp.testkit.Splits;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.EncoderException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static dev.iwarp.testkit.ChannelOctets.buf;
import static dev.iwarp.testkit.ChannelOctets.drainInbound;
import static dev.iwarp.testkit.ChannelOctets.drainOutbound;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link MpaFramer} against the spec's known answers (draft Figures 5 and 6, their RFC 5044
 * versions, the siw FPDUs of siw_qp_tx.c), an independent reference sender, and hostile
 * input. Every decoded vector is also fed split at every byte boundary and in 1-byte pieces.
 */
class MpaFramerTest {

    // draft-ietf-rddp-mpa-01 Figure 5 ULPDU: untagged Send, version-0 control octets 40 03, MSN 1, 24 zero octets
    static final byte[] FIG5_ULPDU = Hex.parse("40 03 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00" + " 00".repeat(24));
    static final byte[] FIG5_FPDU = Hex.parse("00 00 00 00  00 2A" + "40 03 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00"
            + " 00".repeat(24) + " 4C 86 B3 84");
    // Figure 6 ULPDU: MSN 2
    static final byte[] FIG6_ULPDU = Hex.parse("40 03 00 00 00 00 00 00 00 00 00 00 00 02 00 00 00 00" + " 00".repeat(24));
    static final byte[] FIG6_FPDU = Hex.parse("00 2A 40 03 00 00 00 00 00 00 00 00 00 00 00 02 00 00 00 00"
            + "00 00 00 14" + " 00".repeat(24) + " A1 9C D1 03");

    static EmbeddedChannel framer(boolean crc, boolean markersTx, boolean markersRx) {
        return new EmbeddedChannel(new MpaFramer(crc, markersTx, markersRx, 0xFFFF, 1454, false));
    }

    static byte[] withControl(byte[] v, int index, String control) {
        byte[] c = v.clone();
        byte[] ctl = Hex.parse(control);
        System.arraycopy(ctl, 0, c, index, ctl.length);
        return c;
    }

    /** Feeds {@code stream} to a fresh receiving framer in every split and checks the ULPDUs delivered. */
    static void assertDecodesEverySplit(byte[] stream, boolean crc, boolean markersRx, List<byte[]> expected) {
        Splits.forEachSplit(stream, pieces -> {
            EmbeddedChannel ch = framer(crc, false, markersRx);
            for (ByteBuf piece : pieces) {
                ch.writeInbound(piece);
            }
            List<byte[]> got = drainInbound(ch);
            assertEquals(expected.size(), got.size(), "ULPDUs for split " + pieces.size());
            for (int i = 0; i < expected.size(); i++) {
                assertArrayEquals(expected.get(i), got.get(i), "ULPDU " + i);
            }
            assertFalse(ch.finish());
        });
    }

    static byte[] encode(EmbeddedChannel tx, byte[]... ulpdus) {
        for (byte[] u : ulpdus) {
            tx.writeOutbound(buf(u));
        }
        return drainOutbound(tx);
    }

    // ------------------------------------------------------------ known answers

    @Test
    void draftFigure5EncodesByteExact() {
        EmbeddedChannel tx = framer(true, true, false);
        assertArrayEquals(FIG5_FPDU, encode(tx, FIG5_ULPDU));
        assertFalse(tx.finish());
    }

    @Test
    void draftFigure5DecodesEverySplit() {
        assertDecodesEverySplit(FIG5_FPDU, true, true, List.of(FIG5_ULPDU));
    }

    @Test
    void draftFigure6EncodesByteExactAfterA482OctetFpdu() {
        byte[] first = new byte[482];
        first[0] = 0x40;
        first[1] = 0x03;
        first[13] = 1; // MSN 1
        EmbeddedChannel tx = framer(true, true, false);
        byte[] stream = encode(tx, first, FIG6_ULPDU);
        // the first FPDU occupied 0x000-0x1EB: marker + 2 + 482 + 0 pad + CRC = 492 octets
        assertEquals(0x1EC + FIG6_FPDU.length, stream.length);
        assertArrayEquals(FIG6_FPDU, Arrays.copyOfRange(stream, 0x1EC, stream.length));
        assertArrayEquals(new ReferenceBytes(true, true).of(first, FIG6_ULPDU), stream);
        assertDecodesEverySplit(stream, true, true, List.of(first, FIG6_ULPDU));
        assertFalse(tx.finish());
    }

    @Test
    void rfc5044VersionsOfFigures5And6() {
        // RFC 5044's figures: control octets 41 43 (DDP DV=1, RDMAP RV=1) change the CRCs
        byte[] u5 = withControl(FIG5_ULPDU, 0, "41 43");
        byte[] f5 = withControl(withControl(FIG5_FPDU, 6, "41 43"), 48, "52 23 99 83");
        assertArrayEquals(f5, encode(framer(true, true, false), u5));
        assertDecodesEverySplit(f5, true, true, List.of(u5));

        byte[] u6 = withControl(FIG6_ULPDU, 0, "41 43");
        byte[] f6 = withControl(withControl(FIG6_FPDU, 2, "41 43"), 48, "84 92 58 98");
        byte[] first = new byte[482];
        byte[] stream = encode(framer(true, true, false), first, u6);
        assertArrayEquals(f6, Arrays.copyOfRange(stream, 0x1EC, stream.length));
    }

    // siw_qp_tx.c: byte-exact FPDUs as siw builds them (no markers)
    static final byte[] SIW_SEND = Hex.parse("00 22 41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00"
            + "00 00 55 d5 c0 a0 b2 a0 00 12 ab 00 00 00 00 40");
    static final byte[] SIW_READ_REQUEST = Hex.parse("00 2e 41 41 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00 00"
            + "00 34 cd 00 00 00 7f 00 11 22 33 40 00 00 00 40 00 12 ab 00 00 00 55 d5 c0 a0 b2 a0");
    static final byte[] SIW_WRITE_RTR = Hex.parse("00 0e c1 40 00 00 00 01 00 00 00 00 00 00 00 00");

    static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int i = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, i, p.length);
            i += p.length;
        }
        return out;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "rping Send CRC on,      SEND,  da f3 85 ef, true",
            "rping Send CRC off,     SEND,  00 00 00 00, false",
            "Read Request CRC on,    READ,  81 35 1c e8, true",
            "Write RTR CRC off,      RTR,   00 00 00 00, false",
    })
    void siwFpdus(String name, String which, String crcField, boolean crc) {
        byte[] headerAndUlpdu = which.equals("SEND") ? SIW_SEND : which.equals("READ") ? SIW_READ_REQUEST : SIW_WRITE_RTR;
        byte[] ulpdu = Arrays.copyOfRange(headerAndUlpdu, 2, headerAndUlpdu.length);
        byte[] fpdu = concat(headerAndUlpdu, new byte[(-headerAndUlpdu.length) & 3], Hex.parse(crcField));
        assertArrayEquals(fpdu, encode(framer(crc, false, false), ulpdu));
        assertDecodesEverySplit(fpdu, crc, false, List.of(ulpdu));
    }

    @Test
    void siwReadResponseCrc() {
        byte[] ulpdu = concat(Hex.parse("c1 42 00 34 cd 00 00 00 7f 00 11 22 33 40"), filled(64, 0x41));
        byte[] fpdu = encodeNoMarkers(ulpdu, true);
        assertEquals(84, fpdu.length);
        assertArrayEquals(Hex.parse("00 4e c1 42 00 34 cd 00 00 00 7f 00 11 22 33 40 41 41"), Arrays.copyOf(fpdu, 18));
        assertArrayEquals(Hex.parse("64 03 3e 57"), Arrays.copyOfRange(fpdu, 80, 84));
    }

    static byte[] filled(int n, int v) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) v);
        return b;
    }

    static byte[] encodeNoMarkers(byte[] ulpdu, boolean crc) {
        EmbeddedChannel tx = framer(crc, false, false);
        byte[] out = encode(tx, ulpdu);
        assertFalse(tx.finish());
        return out;
    }

    // ------------------------------------------------------------ marker placement against the reference

    /** Convenience wrapper over the reference sender. */
    static final class ReferenceBytes {
        final boolean markers;
        final boolean crc;

        ReferenceBytes(boolean markers, boolean crc) {
            this.markers = markers;
            this.crc = crc;
        }

        byte[] of(byte[]... ulpdus) {
            MpaTestUtil.ReferenceSender r = new MpaTestUtil.ReferenceSender(markers, crc);
            for (byte[] u : ulpdus) {
                r.emit(u);
            }
            return r.bytes();
        }
    }

    @ParameterizedTest(name = "markers={0} crc={1}")
    @CsvSource({"true,true", "true,false", "false,true", "false,false"})
    void randomStreamMatchesReferenceAndRoundTrips(boolean markers, boolean crc) {
        Random rnd = new Random(5044);
        List<byte[]> ulpdus = new ArrayList<>();
        // sizes that hit every pad, markers right after the pad, FPDUs holding many markers, 0 and the max
        int[] fixed = {0, 1, 2, 3, 4, 5, 14, 18, 482, 506, 508, 509, 510, 1018, 1020, 4096, 64768};
        for (int s : fixed) {
            ulpdus.add(randomBytes(rnd, s));
        }
        for (int i = 0; i < 200; i++) {
            ulpdus.add(randomBytes(rnd, rnd.nextInt(i % 10 == 0 ? 9000 : 700)));
        }
        byte[][] arr = ulpdus.toArray(new byte[0][]);
        EmbeddedChannel tx = framer(crc, markers, false);
        byte[] stream = encode(tx, arr);
        assertFalse(tx.finish());
        assertArrayEquals(new ReferenceBytes(markers, crc).of(arr), stream);

        // decode in random pieces (every-split for this 300 KB stream would be too slow; the short
        // vectors above cover that) and in one piece
        for (int round = 0; round < 20; round++) {
            EmbeddedChannel rx = framer(crc, false, markers);
            int i = 0;
            while (i < stream.length) {
                // the last rounds' reads are mostly long enough to join the cumulation as components
                int n = Math.min(stream.length - i, 1 + rnd.nextInt(round < 10 ? 40 : round < 15 ? 3000 : 20000));
                rx.writeInbound(Unpooled.wrappedBuffer(stream, i, n));
                i += n;
            }
            List<byte[]> got = drainInbound(rx);
            assertEquals(arr.length, got.size());
            for (int k = 0; k < arr.length; k++) {
                assertArrayEquals(arr[k], got.get(k), "ULPDU " + k);
            }
            assertFalse(rx.finish());
        }
    }

    static byte[] randomBytes(Random rnd, int n) {
        byte[] b = new byte[n];
        rnd.nextBytes(b);
        return b;
    }

    @Test
    void wireLengthAndMulpduFormulas() {
        // RFC 5044 §4.5 (MULPDU) examples
        assertEquals(1454, MpaFramer.mulpdu(1460, false));
        assertEquals(1442, MpaFramer.mulpdu(1460, true));
        assertEquals(1442, MpaFramer.mulpdu(1448, false));
        assertEquals(1430, MpaFramer.mulpdu(1448, true));
        assertEquals(8942, MpaFramer.mulpdu(8948, false));
        assertEquals(8870, MpaFramer.mulpdu(8948, true));
        assertEquals(128, MpaFramer.mulpdu(100, true));
        assertEquals(64768, MpaFramer.mulpdu(65495, false));
        // Figure 5: leading marker, 42-octet ULPDU: 52 octets; Figure 6 at 0x1EC: 48 + marker = 52
        assertEquals(52, MpaFramer.wireLength(0, 42, true));
        assertEquals(52, MpaFramer.wireLength(0x1EC, 42, true));
        assertEquals(492, MpaFramer.wireLength(0, 482, true));
        assertEquals(48, MpaFramer.wireLength(0, 42, false));
        // marker right after the PAD: body 508 from offset 4 ends at 512 -> marker, then CRC
        assertEquals(4 + 508 + 4 + 4, MpaFramer.wireLength(0, 506, true));
    }

    // ------------------------------------------------------------ hostile input

    @Test
    void flippedCrcBitIsError2NoCloseAndNothingMoreDelivered() {
        byte[] good = concat(SIW_SEND, Hex.parse("da f3 85 ef"));
        for (int bit = 0; bit < good.length * 8; bit += 7) {
            byte[] bad = good.clone();
            bad[bit / 8] ^= (byte) (1 << (bit % 8));
            if (bit / 8 < 2) {
                continue; // a flipped length bit changes the framing itself; covered below
            }
            EmbeddedChannel ch = framer(true, false, false);
            MpaException e = assertThrows(MpaException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(bad)));
            assertEquals(MpaErrorCode.CRC_ERROR, e.errorCode());
            assertTrue(ch.isOpen(), "RFC 5044 §8: MPA does not close on a CRC error");
            // RFC 5044 §8: nothing more delivered on this half connection, even valid FPDUs
            ch.writeInbound(Unpooled.wrappedBuffer(good));
            assertTrue(drainInbound(ch).isEmpty());
            assertFalse(ch.finish());
        }
    }

    @Test
    void flippedLengthBitIsCaughtByCrcOnceTheFpduIsIn() {
        byte[] bad = concat(SIW_SEND, Hex.parse("da f3 85 ef"), new byte[64]);
        bad[1] ^= 0x04; // ULPDU_Length 0x22 -> 0x26
        EmbeddedChannel ch = framer(true, false, false);
        MpaException e = assertThrows(MpaException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(bad)));
        assertEquals(MpaErrorCode.CRC_ERROR, e.errorCode());
        assertFalse(ch.finish());
    }

    @Test
    void crcOffNeverChecksTheField() {
        byte[] fpdu = concat(SIW_SEND, Hex.parse("de ad be ef"));
        assertDecodesEverySplit(fpdu, false, false, List.of(Arrays.copyOfRange(SIW_SEND, 2, SIW_SEND.length)));
    }

    @Test
    void markerPointingToTheWrongPlaceIsError3() {
        byte[] first = new byte[482];
        for (boolean crc : new boolean[] {true, false}) {
            byte[] stream = new ReferenceBytes(true, crc).of(first, FIG6_ULPDU);
            stream[0x203] = 0x18; // FPDUPTR 0x14 -> 0x18
            if (crc) { // keep the CRC valid so that the marker check is what fails (RFC 5044 §8 code 3)
                int v = Crc32c.compute(Unpooled.wrappedBuffer(stream), 0x1EC, 0x21C - 0x1EC);
                stream[0x21C] = (byte) v;
                stream[0x21D] = (byte) (v >>> 8);
                stream[0x21E] = (byte) (v >>> 16);
                stream[0x21F] = (byte) (v >>> 24);
            }
            EmbeddedChannel ch = framer(crc, false, true);
            MpaException e = assertThrows(MpaException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(stream)));
            assertEquals(MpaErrorCode.MARKER_MISMATCH, e.errorCode());
            List<byte[]> delivered = drainInbound(ch);
            assertEquals(1, delivered.size(), "the first FPDU was good and is delivered before the error");
            assertTrue(ch.isOpen());
            assertFalse(ch.finish());
        }
    }

    @Test
    void leadingMarkerMustBeZero() {
        byte[] bad = FIG5_FPDU.clone();
        bad[3] = 0x04;
        EmbeddedChannel ch = framer(false, false, true);
        MpaException e = assertThrows(MpaException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(bad)));
        assertEquals(MpaErrorCode.MARKER_MISMATCH, e.errorCode());
        assertFalse(ch.finish());
    }

    @Test
    void fpduPtrLowBitsAreIgnored() {
        // RFC 5044 §4.3: the two low bits of FPDUPTR are treated as zero
        byte[] stream = FIG5_FPDU.clone();
        stream[3] = 0x03;
        assertDecodesEverySplit(stream, false, true, List.of(FIG5_ULPDU));
    }

    @Test
    void zeroLengthUlpduIsFramedAndDelivered() {
        // MPA frames it; the DDP layer above rejects a ULPDU shorter than its header (RFC 5044 §4.1)
        byte[] fpdu = encodeNoMarkers(new byte[0], true);
        assertEquals(8, fpdu.length);
        assertArrayEquals(Hex.parse("00 00 00 00"), Arrays.copyOf(fpdu, 4));
        assertEquals(Crc32c.RESIDUE, Crc32c.compute(Unpooled.wrappedBuffer(fpdu), 0, 8));
        assertDecodesEverySplit(fpdu, true, false, List.of(new byte[0]));
    }

    @Test
    void ulpduLength65535IsAcceptedByDefaultAndRefusedAboveAConfiguredMaximum() {
        // siw sends ULPDUs above 64768 on loopback (siw_qp_tx.c)
        byte[] ulpdu = randomBytes(new Random(1), 65535);
        MpaTestUtil.ReferenceSender r = new MpaTestUtil.ReferenceSender(false, true);
        r.emit(ulpdu);
        byte[] fpdu = r.bytes();
        EmbeddedChannel ch = framer(true, false, false);
        ch.writeInbound(Unpooled.wrappedBuffer(fpdu, 0, 30000), Unpooled.wrappedBuffer(fpdu, 30000, fpdu.length - 30000));
        List<byte[]> got = drainInbound(ch);
        assertEquals(1, got.size());
        assertArrayEquals(ulpdu, got.get(0));
        assertFalse(ch.finish());

        EmbeddedChannel strict = new EmbeddedChannel(new MpaFramer(true, false, false, 64768, 1454, false));
        MpaException e = assertThrows(MpaException.class, () -> strict.writeInbound(Unpooled.wrappedBuffer(fpdu)));
        assertEquals(MpaErrorCode.LOCAL_CATASTROPHIC, e.errorCode());
        assertTrue(strict.isOpen());
        assertFalse(strict.finish());
    }

    @Test
    void senderRefusesUlpduAbove64768() {
        EmbeddedChannel tx = framer(true, false, false);
        ChannelFuture f = tx.writeOneOutbound(Unpooled.wrappedBuffer(new byte[64769]));
        tx.flushOutbound();
        assertFalse(f.isSuccess());
        assertInstanceOf(EncoderException.class, f.cause());
        assertEquals(0, drainOutbound(tx).length);
        assertFalse(tx.finish());
    }

    @Test
    void garbageIsNeverDeliveredAsAValidFpdu() {
        // an HTTP request read as FPDUs: ULPDU_Length 0x4745 and a CRC that cannot match
        byte[] garbage = "GET / HTTP/1.1\r\nHost: example\r\n\r\n".repeat(700).getBytes();
        EmbeddedChannel ch = framer(true, false, false);
        MpaException e = assertThrows(MpaException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(garbage)));
        assertEquals(MpaErrorCode.CRC_ERROR, e.errorCode());
        assertTrue(drainInbound(ch).isEmpty());
        assertFalse(ch.finish());
    }

    // ------------------------------------------------------------ rule 4 hold

    @Test
    void responderHoldsFpdusUntilOneValidFpduArrived() {
        EmbeddedChannel ch = new EmbeddedChannel(new MpaFramer(true, false, false, 0xFFFF, 1454, true));
        ChannelFuture w = ch.writeAndFlush(buf(Hex.parse("41 43 00 00")));
        assertEquals(0, drainOutbound(ch).length, "RFC 5044 §7.1.2 rule 4: nothing before an FPDU arrived");
        assertFalse(w.isDone());

        byte[] corrupt = concat(SIW_SEND, Hex.parse("00 00 00 00"));
        assertThrows(MpaException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(corrupt)));
        assertEquals(0, drainOutbound(ch).length, "an invalid FPDU does not release the hold");
        assertFalse(ch.finish());
        assertTrue(w.isDone() && !w.isSuccess());

        EmbeddedChannel ch2 = new EmbeddedChannel(new MpaFramer(true, false, false, 0xFFFF, 1454, true));
        ChannelFuture w2 = ch2.writeAndFlush(buf(Hex.parse("41 43 00 00")));
        ch2.writeInbound(Unpooled.wrappedBuffer(concat(SIW_SEND, Hex.parse("da f3 85 ef"))));
        drainInbound(ch2);
        byte[] sent = drainOutbound(ch2);
        assertArrayEquals(encodeNoMarkers(Hex.parse("41 43 00 00"), true), sent);
        assertTrue(w2.isSuccess());
        assertFalse(ch2.finish());
    }
}
