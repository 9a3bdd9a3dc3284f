package dev.iwarp.mpa;

import dev.iwarp.testkit.ChannelOctets;
import dev.iwarp.testkit.SharedData;
import dev.iwarp.testkit.Splits;
import dev.iwarp.testkit.TcpConnection;
import dev.iwarp.testkit.TcpStream;
import dev.iwarp.testkit.TcpStreams;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

import static dev.iwarp.testkit.ChannelOctets.drainOutbound;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real Linux siw traffic ({@code ../shared/testdata/siw-pcap/}, tshark summaries in the {@code .txt}
 * files). For every MPA connection in a capture:
 * <ul>
 *   <li>our Initiator, configured as siw was, must send siw's Request byte for byte, and must accept
 *       siw's Reply and every FPDU siw sent (checking each CRC when C=1);</li>
 *   <li>our Responder, configured as siw was, must answer siw's Request with siw's Reply byte for
 *       byte, and must accept every FPDU the siw Initiator sent;</li>
 *   <li>the FPDU count per capture equals tshark's, and every ULPDU starts with a DDP/RDMAP header of
 *       version 1 (proof the FPDU boundaries are right);</li>
 *   <li>each stream is fed whole, split at every byte boundary (short captures), in 1-byte pieces and
 *       in the TCP segments as captured.</li>
 * </ul>
 */
class SiwCaptureTest {

    @BeforeAll
    static void needsSharedData() {
        SharedData.assumeAvailable("the real siw captures");
    }

    /** Settings that make our stack behave as siw did in the capture, derived from siw's own Request. */
    static MpaSettings siwLike(MpaStartupFrame request) {
        MpaSettings.Builder b = MpaSettings.builder().revision(request.revision()).crc(request.crc())
                .markers(request.markers()).maxIrd(128);
        MpaIrdOrd w = request.irdOrd();
        if (w != null) {
            b.ird(w.ird()).ord(w.ord());
            if (w.peerToPeer()) {
                b.peerToPeer(true).rtrTypes(w.rtrTypes().toArray(new RtrType[0]));
            }
        } else {
            b.ird(128).ord(128);
        }
        return b.build();
    }

    /** siw as Responder: IRD/ORD up to its device maximum, C echoed, Write RTR preferred. */
    static MpaSettings siwResponder(MpaStartupFrame request) {
        return MpaSettings.builder().crc(request.crc()).ird(128).ord(128).rtrTypes(RtrType.WRITE, RtrType.READ).build();
    }

    static final class Outcome {
        int ulpdus;
        MpaStartupCompletionEvent completion;
    }

    /** Feeds {@code pieces} of the server-to-client stream to our Initiator; checks our Request is siw's. */
    static Outcome runInitiator(MpaStartupFrame siwRequest, byte[] siwRequestBytes, List<ByteBuf> pieces) {
        MpaPair.Recorder app = new MpaPair.Recorder(null);
        EmbeddedChannel ch = new EmbeddedChannel(MpaStartupHandler.initiator(siwLike(siwRequest)), app);
        assertArrayEquals(siwRequestBytes, drainOutbound(ch), "our Request equals siw's");
        for (ByteBuf p : pieces) {
            ch.writeInbound(p);
        }
        assertTrue(app.exceptions.isEmpty(), () -> "exceptions: " + app.exceptions);
        Outcome o = new Outcome();
        o.completion = app.completion;
        o.ulpdus = checkUlpdus(app.received);
        ch.finishAndReleaseAll();
        return o;
    }

    /** Feeds the client-to-server stream to our Responder; checks our Reply is siw's when {@code siwReply} given. */
    static Outcome runResponder(MpaSettings settings, byte[] siwReply, List<ByteBuf> pieces) {
        MpaPair.Recorder app = new MpaPair.Recorder(MpaConnectRequest::accept);
        EmbeddedChannel ch = new EmbeddedChannel(MpaStartupHandler.responder(settings), app);
        for (ByteBuf p : pieces) {
            ch.writeInbound(p);
        }
        byte[] sent = drainOutbound(ch);
        if (siwReply != null) {
            assertArrayEquals(siwReply, Arrays.copyOf(sent, siwReply.length), "our Reply equals siw's");
        }
        assertTrue(app.exceptions.isEmpty(), () -> "exceptions: " + app.exceptions);
        Outcome o = new Outcome();
        o.completion = app.completion;
        o.ulpdus = checkUlpdus(app.received);
        ch.finishAndReleaseAll();
        return o;
    }

    private static int checkUlpdus(List<byte[]> ulpdus) {
        for (byte[] u : ulpdus) {
            assertTrue(u.length >= 14, "a DDP header fits in every siw ULPDU");
            assertEquals(1, u[0] & 0x03, "DDP version 1");
            assertEquals(1, (u[1] & 0xC0) >> 6, "RDMAP version 1");
        }
        return ulpdus.size();
    }

    static List<TcpConnection> mpaConnections(String pcap) throws Exception {
        List<TcpConnection> list = new ArrayList<>();
        for (TcpConnection c : TcpStreams.of(SharedData.siwPcap(pcap))) {
            byte[] b = c.clientToServer().bytes();
            if (b.length >= 16 && Arrays.equals(Arrays.copyOf(b, 16), MpaStartupFrame.Type.REQUEST.key())) {
                list.add(c);
            }
        }
        return list;
    }

    /** Every delivery pattern we feed a stream in; the full every-split only for short streams. */
    static void forEachDelivery(TcpStream stream, Consumer<List<ByteBuf>> feeder) {
        byte[] bytes = stream.bytes();
        if (bytes.length <= 4096) {
            Splits.forEachSplit(bytes, feeder);
        } else {
            feeder.accept(List.of(Unpooled.wrappedBuffer(bytes.clone())));
            List<ByteBuf> ones = new ArrayList<>();
            for (byte[] b : Splits.oneBytePieces(bytes)) {
                ones.add(Unpooled.wrappedBuffer(b));
            }
            feeder.accept(ones);
        }
        List<ByteBuf> asCaptured = new ArrayList<>();
        for (TcpStream.Chunk c : stream.chunks()) {
            asCaptured.add(Unpooled.wrappedBuffer(bytes, (int) c.offset(), c.length()).copy());
        }
        feeder.accept(asCaptured);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            // capture,                     MPA connections, FPDUs (tshark), CRC
            "rping.pcap,                    1, 21, false",
            "rping-crc.pcap,                1, 21, true",
            "rping-p2p.pcap,                1, 22, false",
            "rping-mpa-rev1.pcap,           1,  1, false",
            "probe-crc-host-initiator.pcap, 1,  2, true",
            "ib_write_bw.pcap,              2, 52, false",
            "ib_read_bw.pcap,               2, 72, false",
            "ib_send_bw.pcap,               2, 46, false",
    })
    void bothRolesAgainstSiw(String pcap, int connections, int fpdus, boolean crc) throws Exception {
        List<TcpConnection> conns = mpaConnections(pcap);
        assertEquals(connections, conns.size());
        int total = 0;
        for (TcpConnection c : conns) {
            byte[] c2s = c.clientToServer().bytes();
            byte[] s2c = c.serverToClient().bytes();
            MpaStartupFrame request = MpaStartupFrame.decode(Unpooled.wrappedBuffer(c2s), 512);
            MpaStartupFrame reply = MpaStartupFrame.decode(Unpooled.wrappedBuffer(s2c), 512);
            assertNotNull(request);
            assertNotNull(reply);
            byte[] requestBytes = Arrays.copyOf(c2s, request.encodedLength());
            byte[] replyBytes = Arrays.copyOf(s2c, reply.encodedLength());
            assertEquals(crc, request.crc() || reply.crc());

            int[] fromServer = {-1};
            forEachDelivery(c.serverToClient(), pieces -> {
                Outcome o = runInitiator(request, requestBytes, pieces);
                assertTrue(o.completion.isSuccess(), () -> String.valueOf(o.completion.cause()));
                MpaParameters p = o.completion.parameters();
                assertEquals(crc, p.crc());
                assertEquals(request.revision(), p.revision());
                assertFalse(p.markersTx() || p.markersRx(), "siw never uses markers");
                if (fromServer[0] >= 0) {
                    assertEquals(fromServer[0], o.ulpdus, "same FPDUs for every delivery pattern");
                }
                fromServer[0] = o.ulpdus;
            });
            int[] fromClient = {-1};
            forEachDelivery(c.clientToServer(), pieces -> {
                Outcome o = runResponder(siwResponder(request), replyBytes, pieces);
                assertTrue(o.completion.isSuccess(), () -> String.valueOf(o.completion.cause()));
                if (fromClient[0] >= 0) {
                    assertEquals(fromClient[0], o.ulpdus, "same FPDUs for every delivery pattern");
                }
                fromClient[0] = o.ulpdus;
            });
            total += fromServer[0] + fromClient[0];
        }
        assertEquals(fpdus, total, "FPDUs decoded in both directions, as counted by tshark");
    }

    @Test
    void siwRejectsMarkersAndOurInitiatorSeesTheRejectionWithTcpOpen() throws Exception {
        TcpConnection c = mpaConnections("probe-markers-rejected.pcap").get(0);
        byte[] c2s = c.clientToServer().bytes();
        MpaStartupFrame request = MpaStartupFrame.decode(Unpooled.wrappedBuffer(c2s), 512);
        assertTrue(request.markers(), "the probe asked for markers (M=1)");
        forEachDelivery(c.serverToClient(), pieces -> {
            MpaPair.Recorder app = new MpaPair.Recorder(null);
            EmbeddedChannel ch = new EmbeddedChannel(MpaStartupHandler.initiator(siwLike(request)), app);
            assertArrayEquals(Arrays.copyOf(c2s, request.encodedLength()), drainOutbound(ch));
            for (ByteBuf p : pieces) {
                ch.writeInbound(p);
            }
            MpaRejectedException e = assertInstanceOf(MpaRejectedException.class, app.completion.cause());
            assertEquals(MpaIrdOrd.of(0, 0), e.reply().irdOrd(), "siw's protocol reject carries zero IRD/ORD");
            assertFalse(e.reply().markers());
            assertTrue(ch.isOpen(), "RFC 5044 §7.1.2 rule 3: TCP left open after R=1");
            ch.finishAndReleaseAll();
        });
        // our Responder refuses it by default with exactly siw's Reply (captured), then closes
        byte[] s2c = c.serverToClient().bytes();
        byte[] siwReply = Arrays.copyOf(s2c, MpaStartupFrame.decode(Unpooled.wrappedBuffer(s2c), 512).encodedLength());
        Outcome refused = runResponder(siwResponder(request), siwReply, List.of(Unpooled.wrappedBuffer(c2s)));
        assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME,
                assertInstanceOf(MpaException.class, refused.completion.cause()).errorCode());
        // opted in, it can send markers, so it accepts the same Request (M=1 -> markers toward the Initiator)
        Outcome o = runResponder(siwResponder(request).toBuilder().acceptMarkers(true).build(), null,
                List.of(Unpooled.wrappedBuffer(c2s)));
        assertTrue(o.completion.parameters().markersTx());
    }

    @Test
    void httpGarbageThatSiwClosedOnIsError4ForUsToo() throws Exception {
        List<TcpConnection> conns = TcpStreams.of(SharedData.siwPcap("c-host-to-guest-garbage.pcap"));
        assertEquals(1, conns.size());
        byte[] garbage = conns.get(0).clientToServer().bytes();
        Splits.forEachSplit(garbage, pieces -> {
            MpaPair.Recorder app = new MpaPair.Recorder(MpaConnectRequest::accept);
            EmbeddedChannel ch = new EmbeddedChannel(MpaStartupHandler.responder(MpaSettings.defaults()), app);
            for (ByteBuf p : pieces) {
                if (ch.isOpen()) {
                    ch.writeInbound(p);
                } else {
                    p.release();
                }
            }
            assertEquals(MpaErrorCode.INVALID_STARTUP_FRAME,
                    assertInstanceOf(MpaException.class, app.completion.cause()).errorCode());
            assertFalse(ch.isOpen());
            assertEquals(0, drainOutbound(ch).length, "no Reply to garbage");
            ch.finishAndReleaseAll();
        });
    }
}
