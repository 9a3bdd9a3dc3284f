package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.server.wire.IwarpWire;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code probe} and {@code sendrecv} against {@code serve} in-process: each probe case draws the
 * Terminate RFC 5040/5041 name for it (our server is the RFC reference here), the server stays
 * healthy afterwards, and {@code sendrecv} gets every Send echoed.
 */
class ProbeAndSendRecvTest {
    private RpingServer server;
    private IwarpStack clientStack;

    @BeforeEach
    void start() throws Exception {
        ServerLimits d = ServerLimits.defaults(); // with --allow-markers: the markers case checks what RFC 5044 asks
        server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withLimits(new ServerLimits(
                d.maxStartups(), d.maxPerSource(), d.messageDeadlineMs(), d.maxReadSize(), d.sourcePrefixV4(),
                d.sourcePrefixV6(), d.maxStartupsPerSource(), d.firstOctetTimeoutMs(), d.drainTimeoutSec(), true,
                d.tlsHandshakesPerSec())), ServeOptions.on(IwarpStack.builder().threads(1).build()));
        clientStack = IwarpStack.builder().threads(1).build();
    }

    @AfterEach
    void stop() {
        clientStack.close();
        server.close();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "write-invalid-stag, 'Terminate DDP 1/1/0x00 tagged buffer error: invalid STag', 'result: AS-RFC: Terminate 1/1/0x00'",
            "read-invalid-stag, 'Terminate RDMAP 0/1/0x00 remote protection error: invalid STag', 'result: AS-RFC: Terminate 0/1/0x00'",
            "send-too-long, 'Terminate DDP 1/2/0x05 untagged buffer error', 'result: AS-RFC: Terminate 1/2/0x05'",
            "markers, 'markers received only', 'result: AS-RFC: the peer accepted M=1'"})
    void everyCaseDrawsTheErrorTheRfcNamesAndServeStaysHealthy(String label, String reaction, String result) {
        StringWriter text = new StringWriter();
        ClientMpaOptions mpa = new ClientMpaOptions();
        mpa.markers = label.equals("markers");
        int code = ProbeCommand.run(clientStack, server.localAddress(), ProbeCommand.Case.parse(label), mpa,
                RpingSession.BUFFER_SIZE + 1, 10_000, new PrintWriter(text, true));
        assertEquals(ProbeCommand.EXIT_AS_RFC, code, text::toString);
        assertTrue(text.toString().contains(reaction), text::toString);
        assertTrue(text.toString().contains(result), text::toString);
        // the violating connection is gone and a normal rping session works
        StringWriter ping = new StringWriter();
        assertTrue(PingCommand.run(IwarpWire.client(clientStack), server.localAddress(), 3, 64, true, false, 10_000,
                new PrintWriter(ping, true)), ping::toString);
    }

    @Test
    void readProbeTerminateCarriesTheReadRequestBack() {
        StringWriter text = new StringWriter();
        ProbeCommand.run(clientStack, server.localAddress(), ProbeCommand.Case.READ_INVALID_STAG,
                new ClientMpaOptions(), 16, 10_000, new PrintWriter(text, true));
        // RFC 5040 §4.8: M D R with the DDP header and the Read Request header of the offending message
        assertTrue(text.toString().contains("M D R DDP segment length 46"), text::toString);
        assertTrue(text.toString().contains("source STag 0x00dead00 TO 0x0000000000000000}"), text::toString);
    }

    @Test
    void aPeerThatIgnoresTheViolationIsReportedAsNoReaction() throws Exception {
        // a Responder that accepts and then reads and discards everything: no Terminate, no close
        try (ServerSocket silent = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> peer = CompletableFuture.runAsync(() -> {
                try (Socket s = silent.accept()) {
                    byte[] req = s.getInputStream().readNBytes(24); // Rev 2 Request with the IRD/ORD words
                    byte[] reply = req.clone();
                    System.arraycopy("MPA ID Rep Frame".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0,
                            reply, 0, 16);
                    s.getOutputStream().write(reply);
                    s.getInputStream().readAllBytes();
                } catch (java.io.IOException ignored) {
                    // the probe closed
                }
            });
            StringWriter text = new StringWriter();
            int code = ProbeCommand.run(clientStack, new InetSocketAddress(silent.getInetAddress(), silent.getLocalPort()),
                    ProbeCommand.Case.WRITE_INVALID_STAG, MpaFraming.of(new ClientMpaOptions().settings(1, 1)), 16,
                    30_000, 1_000, new PrintWriter(text, true)); // startup may be slow on a loaded machine
            assertEquals(ProbeCommand.EXIT_NO_REACTION, code, text::toString);
            assertTrue(text.toString().contains("result: FAIL: no Terminate and no close within 1000 ms"), text::toString);
            peer.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void sendRecvGetsEverySendEchoed() throws InterruptedException {
        StringWriter text = new StringWriter();
        assertTrue(SendRecvCommand.run(IwarpWire.client(clientStack, new ClientMpaOptions().settings(1, 1)), server.localAddress(),
                false, 100, 3, 65536,
                10_000, new PrintWriter(text, true)), text::toString);
        assertTrue(text.toString().contains("message 2: sent 100 octets, received 100 octets"), text::toString);
        assertTrue(text.toString().contains("3/3 messages of 100 octets answered"), text::toString);
        RpingSession session = server.lastSession();
        assertTrue(session.awaitCounts(0, 0, 3, 10_000), session::toString);
        assertEquals(3, session.echoes(), session::toString);
    }

    @Test
    void serveEchoEchoesSixteenOctetSendsThatRpingWouldReadAsAdvertisements() throws Exception {
        try (RpingServer echo = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withEchoOnly(true),
                ServeOptions.on(IwarpStack.builder().threads(1).build()))) {
            StringWriter text = new StringWriter();
            // 16 octets 'a'..'p': as an advertisement, a Read of 0x71727374 octets at STag 0x696a6b6c
            assertTrue(SendRecvCommand.run(IwarpWire.client(clientStack), echo.localAddress(), false, 16, 2, 65536,
                    10_000, new PrintWriter(text, true), true), text::toString);
            assertTrue(text.toString().contains("message 1: sent 16 octets, received 16 octets: "
                    + "6162636465666768696a6b6c6d6e6f70"), text::toString);
            RpingSession session = echo.lastSession();
            assertTrue(session.awaitCounts(0, 0, 2, 10_000), session::toString);
            assertEquals(2, session.echoes(), session::toString);
            assertEquals(0, session.reads(), session::toString);
        }
    }

    @Test
    void mpaRev1AndPeerToPeerOptionsReachTheWire() {
        ClientMpaOptions rev1 = new ClientMpaOptions();
        rev1.revision = 1;
        StringWriter text = new StringWriter();
        assertTrue(SendRecvCommand.run(IwarpWire.client(clientStack, rev1.settings(1, 1)), server.localAddress(), false, 40, 1,
                65536, 10_000,
                new PrintWriter(text, true)), text::toString);
        assertTrue(text.toString().contains("MPA Rev 1,"), text::toString);
        assertEquals(1, ((IwarpWire.Connection) server.lastSession().connection()).mpaParameters().revision());

        ClientMpaOptions p2p = new ClientMpaOptions();
        p2p.p2p = java.util.List.of("read");
        StringWriter ping = new StringWriter();
        assertTrue(PingCommand.run(IwarpWire.client(clientStack, p2p.settings(1, 1)), server.localAddress(), 2, 64,
                true, false, 10_000, new PrintWriter(ping, true)), ping::toString);
        assertTrue(ping.toString().contains("peer-to-peer RTR READ"), ping::toString);
    }
}
