package dev.iwarp.mpa;

import io.netty.buffer.Unpooled;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The negotiation matrix: {Rev 0, 1, 2} x {C bit each side} x {M bit each side} x {accept, reject}
 * x {P2P off, on with each RTR type (Rev 2)}, an Initiator and a Responder back to back in memory.
 * For every accepted combination FPDUs then flow both ways and the octets on the wire are compared
 * with an independent reference sender configured with what the RFCs say the bits mean.
 */
class MpaNegotiationMatrixTest {

    static Stream<Arguments> matrix() {
        List<Arguments> list = new ArrayList<>();
        for (int rev = 0; rev <= 2; rev++) {
            for (int bits = 0; bits < 16; bits++) {
                for (boolean accept : new boolean[] {true, false}) {
                    List<RtrType> p2p = new ArrayList<>(Arrays.asList((RtrType) null));
                    if (rev == 2) {
                        p2p.addAll(Arrays.asList(RtrType.values()));
                    }
                    for (RtrType rtr : p2p) {
                        list.add(Arguments.of(rev, (bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0, (bits & 8) != 0,
                                accept, rtr));
                    }
                }
            }
        }
        return list.stream();
    }

    @ParameterizedTest(name = "Rev {0} Ci={1} Cr={2} Mi={3} Mr={4} accept={5} p2p={6}")
    @MethodSource("matrix")
    void negotiateThenExchangeFpdus(int rev, boolean ci, boolean cr, boolean mi, boolean mr, boolean accept,
                                    RtrType rtr) {
        MpaSettings.Builder ib = MpaSettings.builder().revision(rev).crc(ci).markers(mi).ird(8).ord(4)
                .privateData(new byte[] {1, 2, 3});
        MpaSettings.Builder rb = MpaSettings.builder().crc(cr).markers(mr).acceptMarkers(true).ird(2).ord(6);
        if (rtr != null) {
            ib.peerToPeer(true).rtrTypes(RtrType.SEND, RtrType.WRITE, RtrType.READ);
            rb.rtrTypes(rtr);
        }
        byte[] replyPd = {9, 8};
        MpaPair pair = new MpaPair(ib.build(), rb.build(), req -> {
            assertArrayEquals(new byte[] {1, 2, 3}, req.privateData());
            if (accept) {
                req.accept(replyPd);
            } else {
                req.reject(replyPd);
            }
        });
        pair.pump();

        MpaStartupCompletionEvent ie = pair.initiatorApp.completion;
        MpaStartupCompletionEvent re = pair.responderApp.completion;
        assertNotNull(ie);
        assertNotNull(re);
        assertTrue(pair.initiator.isOpen() && pair.responder.isOpen(), "both stay open, also after a reject");
        if (!accept) {
            MpaRejectedException ir = assertInstanceOf(MpaRejectedException.class, ie.cause());
            MpaRejectedException rr = assertInstanceOf(MpaRejectedException.class, re.cause());
            assertFalse(ir.rejectedLocally());
            assertTrue(rr.rejectedLocally());
            assertArrayEquals(replyPd, ir.reply().ulpPrivateData());
            assertTrue(ir.reply().rejected());
            assertNull(pair.initiator.pipeline().get(MpaFramer.class), "MPA exited: no framer");
            assertNull(pair.responder.pipeline().get(MpaFramer.class));
            assertNull(pair.initiator.pipeline().get(MpaStartupHandler.class));
            // RFC 5044 §7.1.2: TCP stays open for the ULP, which now sees plain octets
            pair.initiator.writeOutbound(Unpooled.wrappedBuffer(new byte[] {42}));
            pair.pump();
            assertArrayEquals(new byte[] {42}, pair.responderApp.received.get(0));
            pair.finish();
            return;
        }
        assertTrue(ie.isSuccess(), () -> String.valueOf(ie.cause()));
        assertTrue(re.isSuccess(), () -> String.valueOf(re.cause()));
        MpaParameters ip = ie.parameters();
        MpaParameters rp = re.parameters();
        assertSame(ip, pair.initiatorMpa.startupFuture().getNow());

        // RFC 5044 §7.1.1: CRC if either C bit; markers per direction from the receiver's M bit
        boolean crc = ci || cr;
        assertEquals(crc, ip.crc());
        assertEquals(crc, rp.crc());
        assertEquals(mr, ip.markersTx());
        assertEquals(mi, ip.markersRx());
        assertEquals(mi, rp.markersTx());
        assertEquals(mr, rp.markersRx());
        assertEquals(rev, ip.revision());
        assertEquals(rev, rp.revision());
        assertEquals(rev == 0 ? 0 : 1, ip.ddpVersion());
        assertArrayEquals(replyPd, ip.peerPrivateData());
        assertArrayEquals(new byte[] {1, 2, 3}, rp.peerPrivateData());
        if (rev == 2) {
            // RFC 6581 §3: each side's ORD <= the other side's IRD
            assertTrue(ip.enhanced() && rp.enhanced());
            assertTrue(ip.ord() <= rp.ird(), ip + " / " + rp);
            assertTrue(rp.ord() <= ip.ird(), ip + " / " + rp);
            assertEquals(2, rp.ird());
            assertEquals(2, ip.ord());
            assertEquals(6, rp.ord());
            assertEquals(8, ip.ird());
            assertEquals(rtr, ip.rtrType());
            assertEquals(rtr, rp.rtrType());
        } else {
            assertFalse(ip.enhanced());
            assertNull(ip.rtrType());
        }
        assertNull(pair.initiator.pipeline().get(MpaStartupHandler.class), "startup handler replaced itself");
        assertNotNull(pair.initiator.pipeline().get(MpaFramer.class));

        // Full operation: the Responder writes first but is held (rule 4) until the Initiator's FPDU.
        Random rnd = new Random(rev * 1000 + (ci ? 1 : 0) + (cr ? 2 : 0) + (mi ? 4 : 0) + (mr ? 8 : 0));
        int[] sizes = {18, 0, 1, 511, 1000, 4093, ip.mulpdu()};
        List<byte[]> fromResponder = new ArrayList<>();
        List<byte[]> fromInitiator = new ArrayList<>();
        for (int s : sizes) {
            byte[] a = new byte[s];
            rnd.nextBytes(a);
            fromResponder.add(a);
            byte[] b = new byte[s];
            rnd.nextBytes(b);
            fromInitiator.add(b);
        }
        int before = pair.responderToInitiator.size();
        for (byte[] a : fromResponder) {
            pair.responder.writeAndFlush(Unpooled.wrappedBuffer(a));
        }
        pair.pump();
        assertEquals(before, pair.responderToInitiator.size(), "RFC 5044 §7.1.2 rule 4");
        int startI = pair.initiatorToResponder.size();
        for (byte[] b : fromInitiator) {
            pair.initiator.writeAndFlush(Unpooled.wrappedBuffer(b));
        }
        pair.pump();

        assertEquals(fromInitiator.size(), pair.responderApp.received.size());
        assertEquals(fromResponder.size(), pair.initiatorApp.received.size());
        for (int i = 0; i < sizes.length; i++) {
            assertArrayEquals(fromInitiator.get(i), pair.responderApp.received.get(i));
            assertArrayEquals(fromResponder.get(i), pair.initiatorApp.received.get(i));
        }
        // the octets on the wire are exactly what the negotiated markers/CRC produce
        byte[] i2r = pair.initiatorToResponder.toByteArray();
        byte[] r2i = pair.responderToInitiator.toByteArray();
        MpaTestUtil.ReferenceSender refI = new MpaTestUtil.ReferenceSender(mr, crc);
        fromInitiator.forEach(refI::emit);
        MpaTestUtil.ReferenceSender refR = new MpaTestUtil.ReferenceSender(mi, crc);
        fromResponder.forEach(refR::emit);
        assertArrayEquals(refI.bytes(), Arrays.copyOfRange(i2r, startI, i2r.length));
        assertArrayEquals(refR.bytes(), Arrays.copyOfRange(r2i, before, r2i.length));
        assertTrue(pair.initiatorApp.exceptions.isEmpty() && pair.responderApp.exceptions.isEmpty());
        pair.finish();
    }
}
