package dev.iwarp.ift;

import dev.iwarp.ift.IftTestUtil.RefFrame;
import dev.iwarp.ift.IftTestUtil.Recorder;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static dev.iwarp.ift.IftVectors.HELLO;
import static dev.iwarp.ift.IftVectors.SEND_HEADER;
import static dev.iwarp.ift.IftVectors.TAGGED_WRITE_HEADER;
import static dev.iwarp.ift.IftVectors.concat;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The negotiation matrix on an in-memory node A / node B pair: every HC/PC/IH/IP combination of each
 * side (with and without node B's omission of ignored CRCs), each {@code require...} option against
 * every combination of the other side, SP both ways, R match and mismatch. Every established pair then
 * exchanges frames both ways and the octets on the wire are compared with an independent reference
 * built from what the draft says the flags mean. The hostile and broken-peer cases are in
 * {@link IftPairFailureTest}.
 */
class IftNegotiationMatrixTest {

    /** Runs one case of a loop, naming it when it fails (one test per outer value keeps the run short). */
    static void named(String name, Runnable test) {
        try {
            test.run();
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError(name + ": " + e.getMessage(), e);
        }
    }

    /** Bits of a CRC combination: 1 HC, 2 PC, 4 IH, 8 IP. */
    static IftSettings.Builder crcs(int bits) {
        return IftSettings.builder().sendCrcs((bits & 1) != 0, (bits & 2) != 0)
                .checkCrcs((bits & 4) == 0, (bits & 8) == 0);
    }

    static boolean hc(int bits) {
        return (bits & 1) != 0;
    }

    static boolean pc(int bits) {
        return (bits & 2) != 0;
    }

    static boolean ih(int bits) {
        return (bits & 4) != 0;
    }

    static boolean ip(int bits) {
        return (bits & 8) != 0;
    }

    @ParameterizedTest(name = "A HC={0} PC={1} IH={2} IP={3} against all 16 of B, omitting or not")
    @CsvSource({"0,0,0,0", "1,0,0,0", "0,1,0,0", "1,1,0,0", "0,0,1,0", "1,0,1,0", "0,1,1,0", "1,1,1,0",
            "0,0,0,1", "1,0,0,1", "0,1,0,1", "1,1,0,1", "0,0,1,1", "1,0,1,1", "0,1,1,1", "1,1,1,1"})
    void everyCrcCombinationNegotiatesAndFramesAsTheFlagsSay(int hc, int pc, int ih, int ip) {
        int aBits = hc | pc << 1 | ih << 2 | ip << 3;
        for (int bBits = 0; bBits < 16; bBits++) {
            for (boolean omit : new boolean[] {true, false}) {
                int b = bBits;
                named("B " + b + " omit=" + omit, () -> crcCase(aBits, b, omit));
            }
        }
    }

    /** Bits: 1 HC, 2 PC, 4 IH, 8 IP. */
    static void crcCase(int aBits, int bBits, boolean omit) {
        IftPair pair = new IftPair(crcs(aBits).build(), crcs(bBits).omitCrcsPeerIgnores(omit).build()).pump();
        IftParameters a = established(pair.aApp);
        IftParameters b = established(pair.bApp);

        // IFT draft §4.2: HC/PC say what the sender sends; node B leaves out what A ignores when omitting
        boolean hcA = hc(aBits);
        boolean pcA = pc(aBits);
        boolean hcB = hc(bBits) && !(omit && ih(aBits));
        boolean pcB = pc(bBits) && !(omit && ip(aBits));
        assertEquals(List.of(hcA, pcA, hcB, pcB), List.of(a.txHeaderCrc(), a.txPayloadCrc(), b.txHeaderCrc(), b.txPayloadCrc()));
        assertEquals(hcB, a.rxHeaderCrcPresent());
        assertEquals(pcB, a.rxPayloadCrcPresent());
        assertEquals(hcA, b.rxHeaderCrcPresent());
        assertEquals(pcA, b.rxPayloadCrcPresent());
        // we check a present CRC unless we announced IH/IP
        assertEquals(hcB && !ih(aBits), a.rxHeaderCrcChecked());
        assertEquals(pcB && !ip(aBits), a.rxPayloadCrcChecked());
        assertEquals(hcA && !ih(bBits), b.rxHeaderCrcChecked());
        assertEquals(pcA && !ip(bBits), b.rxPayloadCrcChecked());
        assertEquals(a.rxHeaderCrcChecked(), b.peerChecksHeaderCrc());
        assertEquals(b.rxPayloadCrcChecked(), a.peerChecksPayloadCrc());
        // VTags cross over
        assertEquals(a.localVTag(), b.peerVTag());
        assertEquals(b.localVTag(), a.peerVTag());
        assertEquals(IftMode.RDMA, a.mode());
        assertFalse(a.markersTx() || a.markersRx() || b.markersTx() || b.markersRx());

        exchangeAndCompare(pair, a, b);
        pair.finish();
    }

    static IftParameters established(Recorder app) {
        assertNotNull(app.completion, "completion event");
        assertTrue(app.completion.isSuccess(), () -> String.valueOf(app.completion.cause()));
        return app.completion.parameters();
    }

    /** ULPDUs both ways; the frames on the wire equal the reference's; every ULPDU arrives intact. */
    static void exchangeAndCompare(IftPair pair, IftParameters a, IftParameters b) {
        Random rnd = new Random(a.localVTag() * 31L + b.localVTag());
        byte[] big = new byte[1000];
        rnd.nextBytes(big);
        List<byte[][]> segments = List.of(new byte[][] {SEND_HEADER, HELLO}, new byte[][] {TAGGED_WRITE_HEADER, new byte[0]},
                new byte[][] {TAGGED_WRITE_HEADER, big}, new byte[][] {SEND_HEADER, new byte[] {7}});
        int aSent = pair.aToB.size();
        int bSent = pair.bToA.size();
        for (byte[][] s : segments) {
            pair.a.write(Unpooled.wrappedBuffer(concat(s[0], s[1])));
            pair.b.write(Unpooled.wrappedBuffer(concat(s[0], s[1])));
        }
        pair.a.flush();
        pair.b.flush();
        pair.pump();
        assertArrayEquals(reference(segments, b.localVTag(), a.txHeaderCrc(), a.txPayloadCrc()),
                Arrays.copyOfRange(pair.aToB.toByteArray(), aSent, pair.aToB.size()), "A to B on the wire");
        assertArrayEquals(reference(segments, a.localVTag(), b.txHeaderCrc(), b.txPayloadCrc()),
                Arrays.copyOfRange(pair.bToA.toByteArray(), bSent, pair.bToA.size()), "B to A on the wire");
        for (Recorder app : new Recorder[] {pair.aApp, pair.bApp}) {
            assertEquals(segments.size(), app.received.size());
            for (int i = 0; i < segments.size(); i++) {
                assertArrayEquals(concat(segments.get(i)[0], segments.get(i)[1]), app.received.get(i));
            }
            assertTrue(app.exceptions.isEmpty(), () -> String.valueOf(app.exceptions));
        }
    }

    static byte[] reference(List<byte[][]> segments, int vTag, boolean hc, boolean pc) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[][] s : segments) {
            RefFrame r = new RefFrame().crcs(hc, pc);
            r.vTag = vTag;
            out.writeBytes(r.build(s[0], s[1]));
        }
        return out.toByteArray();
    }

    // ------------------------------------------------------------ local policy: the require... options

    enum Require { PEER_HEADER_CRC, PEER_PAYLOAD_CRC, PEER_CHECKS_OUR_CRCS }

    static Stream<Arguments> requireMatrix() {
        List<Arguments> list = new ArrayList<>();
        for (Require r : Require.values()) {
            list.add(Arguments.of(true, r, true));
            list.add(Arguments.of(false, r, true));
            list.add(Arguments.of(false, r, false));
        }
        return list.stream();
    }

    static IftSettings.Builder require(IftSettings.Builder b, Require r) {
        switch (r) {
            case PEER_HEADER_CRC:
                return b.requirePeerCrcs(true, false);
            case PEER_PAYLOAD_CRC:
                return b.requirePeerCrcs(false, true);
            default:
                return b.requirePeerChecksOurCrcs(true);
        }
    }

    @ParameterizedTest(name = "requiring side A={0} {1}, B omits={2}, against all 16 of the other side")
    @MethodSource("requireMatrix")
    void requireOptionsRefuseExactlyWhatTheyName(boolean requiringIsA, Require r, boolean omit) {
        for (int other = 0; other < 16; other++) {
            int o = other;
            named("other side " + o, () -> requireCase(requiringIsA, r, o, omit));
        }
    }

    static void requireCase(boolean requiringIsA, Require r, int other, boolean omit) {
        IftSettings requiring = require(IftSettings.builder().omitCrcsPeerIgnores(omit), r).build();
        IftSettings others = crcs(other).omitCrcsPeerIgnores(omit).build();
        IftPair pair = (requiringIsA ? new IftPair(requiring, others) : new IftPair(others, requiring)).pump();

        // what the requiring side itself sends: both CRCs, unless it is node B omitting what A ignores
        boolean ourHc = requiringIsA || !(omit && ih(other));
        boolean ourPc = requiringIsA || !(omit && ip(other));
        IftError expected = null;
        if (r == Require.PEER_HEADER_CRC && !hc(other) || r == Require.PEER_PAYLOAD_CRC && !pc(other)) {
            expected = IftError.CRC_CHOICE_UNACCEPTABLE;
        } else if (r == Require.PEER_CHECKS_OUR_CRCS && (ourHc && ih(other) || ourPc && ip(other))) {
            expected = IftError.CRC_CHECKING_UNACCEPTABLE;
        }
        Recorder req = requiringIsA ? pair.aApp : pair.bApp;
        Recorder oth = requiringIsA ? pair.bApp : pair.aApp;
        if (expected == null) {
            established(req);
            established(oth);
            assertTrue(pair.a.isOpen() && pair.b.isOpen());
        } else {
            assertEquals(expected, ((IftException) req.completion.cause()).error());
            // node B answered with its phase 1 before closing; the other side could only establish
            assertEquals(64, pair.bToA.size());
            established(oth);
            assertFalse(pair.a.isOpen() || pair.b.isOpen(), "closed in error, and the other side saw the FIN");
            assertEquals("inactive", oth.order.get(oth.order.size() - 1));
            assertTrue(oth.exceptions.isEmpty(), "a FIN on a frame boundary is a clean end");
        }
        pair.finish();
    }

    // ------------------------------------------------------------ SP and R

    @ParameterizedTest(name = "SP A={0} B={1}")
    @CsvSource({"false, false", "true, false", "false, true", "true, true"})
    void speculativePlacementIsAPermissionForTheOtherSide(boolean spA, boolean spB) {
        IftPair pair = new IftPair(IftSettings.builder().grantSpeculativePlacement(spA).emss(1448).build(),
                IftSettings.builder().grantSpeculativePlacement(spB).emss(1448).build()).pump();
        IftParameters a = established(pair.aApp);
        IftParameters b = established(pair.bApp);
        assertEquals(spB, a.mayPlaceSpeculatively());
        assertEquals(spA, a.peerMayPlaceSpeculatively());
        assertEquals(spA, b.mayPlaceSpeculatively());
        assertEquals(spB, b.peerMayPlaceSpeculatively());
        // a side that grants SP aligns its frames to TCP segments: 1448 - 6 - 4 - 4
        assertEquals(spA ? 1434 : 65535, a.mulpdu());
        assertEquals(spB ? 1434 : 65535, b.mulpdu());
        exchangeAndCompare(pair, a, b);
        pair.finish();
    }

    @ParameterizedTest(name = "A {0} B {1}")
    @CsvSource({"RDMA, RDMA", "DDP, DDP", "RDMA, DDP", "DDP, RDMA"})
    void rBitsMustMatch(IftMode aMode, IftMode bMode) {
        IftPair pair = new IftPair(IftSettings.builder().mode(aMode).build(), IftSettings.builder().mode(bMode).build()).pump();
        if (aMode == bMode) {
            assertEquals(aMode, established(pair.aApp).mode());
            assertEquals(bMode, established(pair.bApp).mode());
            exchangeAndCompare(pair, pair.aApp.completion.parameters(), pair.bApp.completion.parameters());
        } else {
            // IFT draft §4.2 R: MUST be closed in error; node B's phase 1 tells node A why
            assertEquals(IftError.MODE_MISMATCH, ((IftException) pair.bApp.completion.cause()).error());
            assertEquals(IftError.MODE_MISMATCH, ((IftException) pair.aApp.completion.cause()).error());
            assertEquals(64, pair.bToA.size());
            assertFalse(pair.a.isOpen() || pair.b.isOpen());
        }
        pair.finish();
    }
}
