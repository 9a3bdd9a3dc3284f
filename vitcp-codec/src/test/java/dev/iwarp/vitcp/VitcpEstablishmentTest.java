package dev.iwarp.vitcp;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Pair tests of the active (§4.2) and passive (§4.3) state machines of draft-dicecco-vitcp-01. */
class VitcpEstablishmentTest {

    static final byte[] CLIENT = "client".getBytes(StandardCharsets.US_ASCII);
    static final byte[] SERVER = "server".getBytes(StandardCharsets.US_ASCII);

    /** One active and one passive end over an {@link EmbeddedPair}. */
    static final class Ends implements AutoCloseable {
        final VitcpListenerTable table = new VitcpListenerTable();
        final List<VitcpConnectRequest> requests = new ArrayList<>();
        final VitcpActiveHandler active;
        final VitcpPassiveHandler passive;
        final EmbeddedPair pair;
        RecordingHandler activeConnected;
        RecordingHandler passiveConnected;

        Ends(VitcpConfig activeConfig, VitcpConfig passiveConfig, byte[] called, boolean p2p, boolean register) {
            if (register) {
                table.register(SERVER, passiveConfig, p2p, requests::add);
            }
            active = new VitcpActiveHandler(activeConfig, CLIENT, called, p2p, () -> 3,
                    c -> activeConnected = new RecordingHandler(c));
            passive = new VitcpPassiveHandler(table, passiveConfig);
            pair = new EmbeddedPair(new ChannelHandler[] {new VitcpCodec(activeConfig.crcMode()), active},
                    new ChannelHandler[] {new VitcpCodec(passiveConfig.crcMode()), passive});
            pair.record = true;
        }

        Ends(VitcpConfig activeConfig, VitcpConfig passiveConfig) {
            this(activeConfig, passiveConfig, SERVER, false, true);
        }

        CompletableFuture<VitcpConnection> accept() {
            CompletableFuture<VitcpConnection> f = requests.get(0).accept(
                    c -> passiveConnected = new RecordingHandler(c), () -> 5);
            pair.pump();
            return f;
        }

        @Override
        public void close() {
            pair.close();
        }
    }

    private static VitcpConnectException.Reason failure(CompletableFuture<?> f) {
        assertTrue(f.isDone(), "not done");
        ExecutionException e = assertThrows(ExecutionException.class, f::get);
        return assertInstanceOf(VitcpConnectException.class, e.getCause()).reason();
    }

    @Test
    void acceptDecidedLaterByTheApplication() throws Exception {
        VitcpConfig cfg = VitcpConfig.builder().reliabilityLevel(ViReliabilityLevel.RELIABLE_RECEPTION).build();
        try (Ends e = new Ends(cfg, cfg)) {
            e.pair.pump();
            assertEquals(VitcpActiveHandler.State.PENDING_ACCEPT, e.active.state());
            assertEquals(VitcpPassiveHandler.State.PENDING_ACCEPT, e.passive.state());
            assertEquals(1, e.requests.size());
            VitcpConnectRequest r = e.requests.get(0);
            assertEquals(3, r.remoteRxDescriptorsPosted());
            assertEquals(ViReliabilityLevel.RELIABLE_RECEPTION, r.ceHeader().reliabilityLevel());
            assertEquals("client", new String(r.ceHeader().callingDiscriminator(), StandardCharsets.US_ASCII));
            assertFalse(e.active.result().isDone());

            VitcpConnection passiveSide = e.accept().get();
            VitcpConnection activeSide = e.active.result().get();
            assertTrue(activeSide.active());
            assertFalse(passiveSide.active());
            assertEquals(5, activeSide.remoteRxDescriptorsPosted());
            assertEquals(3, passiveSide.remoteRxDescriptorsPosted());
            assertEquals("server", new String(activeSide.remoteDiscriminator(), StandardCharsets.US_ASCII));
            assertFalse(activeSide.crcEnabled());
            // startup handlers replaced themselves with the full-operation handlers, which saw the event
            assertNull(e.pair.a.pipeline().get(VitcpActiveHandler.class));
            assertNull(e.pair.b.pipeline().get(VitcpPassiveHandler.class));
            assertEquals(List.of(activeSide), e.activeConnected.events);
            assertEquals(List.of(passiveSide), e.passiveConnected.events);
            assertTrue(e.pair.a.isOpen() && e.pair.b.isOpen());
            // ConnectRequest: 24 + 140, no options; ConnectAccept likewise
            assertEquals(164 * 2, e.pair.aToB.get(0).length());
            assertEquals(164 * 2, e.pair.bToA.get(0).length());
            // a second accept is refused
            assertEquals(VitcpConnectException.Reason.CONNECTION_CLOSED,
                    failure(e.requests.get(0).accept(c -> null, null)));
        }
    }

    @Test
    void rejectByTheApplication() {
        VitcpConfig cfg = VitcpConfig.defaults();
        try (Ends e = new Ends(cfg, cfg)) {
            e.pair.pump();
            e.requests.get(0).reject();
            e.pair.pump();
            assertEquals(VitcpConnectException.Reason.REJECTED, failure(e.active.result()));
            assertEquals(VitcpActiveHandler.State.DISCONNECTED, e.active.state());
            assertEquals(VitcpPassiveHandler.State.DISCONNECTED, e.passive.state());
            assertFalse(e.pair.a.isOpen());
            assertFalse(e.pair.b.isOpen());
            // ConnectReject, 24 octets, EOM (no CRC option in the request so no trailer)
            assertEquals("0187" + "0018" + "00".repeat(20), e.pair.bToA.get(0));
        }
    }

    @Test
    void noMatchingDiscriminator() {
        VitcpConfig cfg = VitcpConfig.defaults();
        try (Ends e = new Ends(cfg, cfg, "nobody".getBytes(StandardCharsets.US_ASCII), false, true)) {
            e.pair.pump();
            assertTrue(e.requests.isEmpty());
            assertEquals(VitcpConnectException.Reason.NO_MATCH, failure(e.active.result()));
            assertEquals("0188" + "0018" + "00".repeat(20), e.pair.bToA.get(0));
            assertFalse(e.pair.a.isOpen());
            assertFalse(e.pair.b.isOpen());
        }
    }

    @Test
    void noMatchCarriesTrailerWhenTheRequestHadTheCrcOption() {
        VitcpConfig cfg = VitcpConfig.builder().crcOption(true).build();
        try (Ends e = new Ends(cfg, cfg, "nobody".getBytes(StandardCharsets.US_ASCII), false, true)) {
            e.pair.pump();
            assertEquals(VitcpConnectException.Reason.NO_MATCH, failure(e.active.result()));
            // Segment Length 28 = header + trailer (our reading of §3.6 "by means of the segment length")
            assertEquals("0188" + "001c", e.pair.bToA.get(0).substring(0, 8));
            assertEquals(28 * 2, e.pair.bToA.get(0).length());
        }
    }

    @Test
    void mismatchedReliabilityLevelIsRejectedWithoutAskingTheApplication() {
        try (Ends e = new Ends(VitcpConfig.builder().reliabilityLevel(ViReliabilityLevel.UNRELIABLE).build(),
                VitcpConfig.builder().reliabilityLevel(ViReliabilityLevel.RELIABLE_RECEPTION).build())) {
            e.pair.pump();
            assertTrue(e.requests.isEmpty());
            assertEquals(VitcpConnectException.Reason.REJECTED, failure(e.active.result()));
        }
    }

    @Test
    void mismatchedPeerToPeerBitIsRejected() {
        VitcpConfig cfg = VitcpConfig.defaults();
        try (Ends e = new Ends(cfg, cfg, SERVER, true, false)) {
            e.table.register(SERVER, cfg, false, e.requests::add);
            e.pair.pump();
            assertTrue(e.requests.isEmpty());
            assertEquals(VitcpConnectException.Reason.REJECTED, failure(e.active.result()));
        }
    }

    @Test
    void mtuAndReadWindowNegotiatedDownToTheSmaller() throws Exception {
        try (Ends e = new Ends(VitcpConfig.builder().mtu(8192).rdmaReadWindow(2).build(),
                VitcpConfig.builder().mtu(1500).rdmaReadWindow(16).build())) {
            e.pair.pump();
            VitcpConnection p = e.accept().get();
            VitcpConnection a = e.active.result().get();
            assertEquals(1500, a.mtu());
            assertEquals(1500, p.mtu());
            assertEquals(2, a.rdmaReadWindow());
            assertEquals(2, p.rdmaReadWindow());
        }
        try (Ends e = new Ends(VitcpConfig.builder().mtu(1000).rdmaReadWindow(8).build(),
                VitcpConfig.builder().mtu(4096).rdmaReadWindow(3).build())) {
            e.pair.pump();
            assertEquals(1000, e.accept().get().mtu());
            assertEquals(1000, e.active.result().get().mtu());
            assertEquals(3, e.active.result().get().rdmaReadWindow());
        }
    }

    /** A fake passive end that answers with a hand-made ConnectAccept. */
    private static VitcpConnectException.Reason activeAgainstCannedAccept(VitcpConfig activeCfg, ViCeHeader ce) {
        VitcpActiveHandler active = new VitcpActiveHandler(activeCfg, CLIENT, SERVER, false, null, c -> null);
        io.netty.channel.embedded.EmbeddedChannel ch = new io.netty.channel.embedded.EmbeddedChannel(
                new VitcpCodec(), active);
        io.netty.buffer.ByteBuf request = ch.readOutbound();
        request.release();
        io.netty.channel.embedded.EmbeddedChannel enc = new io.netty.channel.embedded.EmbeddedChannel(
                new VitcpCodec());
        enc.writeOutbound(ViSegment.builder(ViSegmentType.CONNECT_ACCEPT).endOfMessage(true).ceHeader(ce).build());
        io.netty.buffer.ByteBuf accept = enc.readOutbound();
        ch.writeInbound(accept);
        enc.finishAndReleaseAll();
        assertFalse(ch.isOpen(), "closed after refusing the accept");
        ch.finishAndReleaseAll();
        return failure(active.result());
    }

    @Test
    void acceptThatRaisesMtuOrWindowOrChangesLevelIsRefused() {
        VitcpConfig cfg = VitcpConfig.builder().mtu(1024).rdmaReadWindow(2).build();
        int attrs = cfg.callingAttributes(false);
        assertEquals(VitcpConnectException.Reason.ATTRIBUTE_MISMATCH, activeAgainstCannedAccept(cfg,
                new ViCeHeader(attrs, 2048, SERVER, 2, CLIENT, List.of(), false)));
        assertEquals(VitcpConnectException.Reason.ATTRIBUTE_MISMATCH, activeAgainstCannedAccept(cfg,
                new ViCeHeader(attrs, 1024, SERVER, 3, CLIENT, List.of(), false)));
        assertEquals(VitcpConnectException.Reason.ATTRIBUTE_MISMATCH, activeAgainstCannedAccept(cfg,
                new ViCeHeader(ViCallingAttributes.UNRELIABLE, 1024, SERVER, 2, CLIENT, List.of(), false)));
        // CRC option in the accept although the request had none (§3.6)
        assertEquals(VitcpConnectException.Reason.ATTRIBUTE_MISMATCH, activeAgainstCannedAccept(cfg,
                new ViCeHeader(attrs, 1024, SERVER, 2, CLIENT, List.of(ViCeOption.CRC_OPTION), true)));
    }

    @Test
    void activeTimesOutWhilePendingAccept() {
        VitcpConfig cfg = VitcpConfig.builder().connectTimeout(Duration.ofMillis(500)).build();
        try (Ends e = new Ends(cfg, cfg)) {
            e.pair.pump();
            e.pair.advanceTime(400);
            assertFalse(e.active.result().isDone());
            e.pair.advanceTime(150);
            assertEquals(VitcpConnectException.Reason.TIMEOUT, failure(e.active.result()));
            assertFalse(e.pair.a.isOpen());
            // the TCP close reaches the passive end, whose pending request can no longer be accepted
            assertFalse(e.pair.b.isOpen());
            assertEquals(VitcpConnectException.Reason.CONNECTION_CLOSED, failure(e.accept()));
        }
    }

    @Test
    void passiveTimesOutInIncoming() {
        VitcpConfig cfg = VitcpConfig.builder().incomingTimeout(Duration.ofMillis(300)).build();
        VitcpPassiveHandler passive = new VitcpPassiveHandler(new VitcpListenerTable(), cfg);
        // timers on a clock that moves only when advanced: on the real clock, a loaded machine fires the
        // 300 ms timeout before the test advanced 200 ms
        io.netty.util.concurrent.MockTicker clock = io.netty.util.concurrent.Ticker.newMockTicker();
        io.netty.channel.embedded.EmbeddedChannel ch = io.netty.channel.embedded.EmbeddedChannel.builder()
                .ticker(clock).handlers(new VitcpCodec(), passive).build();
        clock.advance(200, java.util.concurrent.TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertTrue(ch.isOpen());
        clock.advance(150, java.util.concurrent.TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertFalse(ch.isOpen());
        assertEquals(VitcpPassiveHandler.State.DISCONNECTED, passive.state());
        ch.finishAndReleaseAll();
    }

    @Test
    void crcOnBothEndsSwitchesTrailersOn() throws Exception {
        VitcpConfig cfg = VitcpConfig.builder().crcOption(true).build();
        try (Ends e = new Ends(cfg, cfg)) {
            e.pair.pump();
            VitcpConnection p = e.accept().get();
            assertTrue(p.crcEnabled());
            assertTrue(e.active.result().get().crcEnabled());
            assertTrue(e.pair.a.pipeline().get(VitcpCodec.class).crcEnabled());
            assertTrue(e.pair.b.pipeline().get(VitcpCodec.class).crcEnabled());
            // request and accept: 24 + 140 + CRC option + EOL = 170, plus the trailer
            assertEquals(174 * 2, e.pair.aToB.get(0).length());
            assertEquals(174 * 2, e.pair.bToA.get(0).length());
            // a NOP now travels with a trailer and arrives intact
            e.pair.a.writeAndFlush(ViSegment.builder(ViSegmentType.NOP).messageAck(7).build());
            e.pair.pump();
            assertEquals(28 * 2, e.pair.aToB.get(1).length());
            assertEquals(1, e.passiveConnected.segments.size());
            assertTrue(e.passiveConnected.segments.get(0).contains("CRC)"), e.passiveConnected.segments.get(0));
        }
    }

    @Test
    void crcOptionOnOneSideOnlyMeansNoCrc() throws Exception {
        for (boolean activeCrc : new boolean[] {true, false}) {
            try (Ends e = new Ends(VitcpConfig.builder().crcOption(activeCrc).build(),
                    VitcpConfig.builder().crcOption(!activeCrc).build())) {
                e.pair.pump();
                assertFalse(e.accept().get().crcEnabled());
                assertFalse(e.active.result().get().crcEnabled());
                assertFalse(e.pair.a.pipeline().get(VitcpCodec.class).crcEnabled());
                assertFalse(e.pair.b.pipeline().get(VitcpCodec.class).crcEnabled());
                // the accept carries no CRC option and no trailer: 164 octets
                assertEquals(164 * 2, e.pair.bToA.get(0).length());
                e.pair.b.writeAndFlush(ViSegment.builder(ViSegmentType.NOP).build());
                e.pair.pump();
                assertEquals(24 * 2, e.pair.bToA.get(1).length());
                assertEquals(1, e.activeConnected.segments.size());
            }
        }
    }

    @Test
    void bytesBehindTheAcceptReachTheFullOperationHandler() throws Exception {
        VitcpConfig cfg = VitcpConfig.builder().crcOption(true).build();
        try (Ends e = new Ends(cfg, cfg)) {
            e.pair.pump();
            VitcpConnectRequest r = e.requests.get(0);
            // accept and a Send queued in the same flush: the active end sees both in one read
            r.accept(c -> new io.netty.channel.ChannelOutboundHandlerAdapter(), null);
            e.pair.b.runPendingTasks();
            e.pair.b.writeAndFlush(ViSegment.builder(ViSegmentType.SEND).endOfMessage(true).messageNumber(1)
                    .build(Unpooled.wrappedBuffer(new byte[] {1, 2, 3})));
            io.netty.buffer.CompositeByteBuf both = Unpooled.compositeBuffer();
            Object m;
            while ((m = e.pair.b.readOutbound()) != null) {
                both.addComponent(true, (io.netty.buffer.ByteBuf) m);
            }
            e.pair.a.writeInbound(both);
            assertTrue(e.active.result().isDone());
            assertEquals(1, e.activeConnected.segments.size());
            assertTrue(e.activeConnected.segments.get(0).startsWith("ViSegment(SEND, EOM"));
            assertTrue(e.activeConnected.segments.get(0).endsWith("payload=3, CRC)"));
        }
    }

    @Test
    void garbageWhilePendingAcceptIsAProtocolError() {
        VitcpConfig cfg = VitcpConfig.defaults();
        try (Ends e = new Ends(cfg, cfg)) {
            e.pair.pump();
            e.pair.a.writeInbound(Unpooled.wrappedBuffer(Splits.hex("02" + "00".repeat(23))));
            assertEquals(VitcpConnectException.Reason.PROTOCOL_ERROR, failure(e.active.result()));
            assertFalse(e.pair.a.isOpen());
        }
    }

    @Test
    void dataBeforeConnectRequestClosesPassiveEnd() {
        VitcpPassiveHandler passive = new VitcpPassiveHandler(new VitcpListenerTable(), VitcpConfig.defaults());
        io.netty.channel.embedded.EmbeddedChannel ch = new io.netty.channel.embedded.EmbeddedChannel(
                new VitcpCodec(), passive);
        ch.writeInbound(Unpooled.wrappedBuffer(Splits.hex(VitcpCodecTest.NOP)));
        assertFalse(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    @Test
    void peerToPeerHigherAddressConnects() throws Exception {
        InetAddress low = InetAddress.getByName("10.0.0.1");
        InetAddress high = InetAddress.getByName("10.0.0.2");
        assertTrue(VitcpPeerToPeer.isActive(high, low, CLIENT, SERVER));
        assertFalse(VitcpPeerToPeer.isActive(low, high, CLIENT, SERVER));
        // unsigned comparison: 200.0.0.1 > 10.0.0.1
        assertTrue(VitcpPeerToPeer.isActive(InetAddress.getByName("200.0.0.1"), low, CLIENT, SERVER));
        assertTrue(VitcpPeerToPeer.isActive(InetAddress.getByName("fe80::2"), InetAddress.getByName("fe80::1"),
                CLIENT, SERVER));
        assertFalse(VitcpPeerToPeer.isActive(InetAddress.getByName("::1"), InetAddress.getByName("8000::"),
                CLIENT, SERVER));
        // same host: the higher discriminator connects ("server" > "client")
        assertTrue(VitcpPeerToPeer.isActive(low, low, SERVER, CLIENT));

        // the lower end listens with the peer-to-peer bit and accepts automatically; the higher end connects
        VitcpConfig cfg = VitcpConfig.defaults();
        try (Ends e = new Ends(cfg, cfg, SERVER, true, false)) {
            e.table.register(SERVER, cfg, true, r -> r.accept(c -> null, null));
            e.pair.pump();
            VitcpConnection a = e.active.result().get();
            assertTrue(a.peerToPeer());
            assertTrue(ViCallingAttributes.has(a.remoteAttributes(), ViCallingAttributes.PEER_TO_PEER));
        }
    }

    @Test
    void urgentMarkerOptionIsNeverSent() {
        ViSegment r = VitcpNegotiation.connectRequest(VitcpConfig.builder().crcOption(true).build(), CLIENT, SERVER,
                false, 0);
        assertFalse(r.ceHeader().hasOption(ViCeOption.URGENT_MARKER));
        r.release();
    }
}
