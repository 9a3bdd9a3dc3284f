package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.tls.TlsCertificates;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.server.wire.VitcpWire;
import dev.iwarp.testkit.LogCapture;
import dev.iwarp.vitcp.VitcpConfig;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the framings log about a peer that sends them junk names the peer as serve's own lines do
 * ({@code 127.0.0.1:40123}), not in Netty's channel form ({@code [id: 0x..., L:/127.0.0.1:7174 - R:/...]}) nor
 * {@code /127.0.0.1:40123}: MPA startup, IFT adaption, VI/TCP connection setup and the TLS handshake.
 */
class FramerLogAddressTest {
    /** Octets that are none of the framings' first octets (not an MPA key, IFT magic, VI/TCP header or TLS record). */
    private static byte[] junk() {
        byte[] b = new byte[80];
        Arrays.fill(b, (byte) 'z');
        return b;
    }

    /** Sends junk to {@code port}, waits for the line {@code logger} logs at INFO or above about it, checks it. */
    private static void junkIsLoggedWithThePeersAddress(RpingServer server, String logger) throws Exception {
        try (LogCapture log = LogCapture.of(logger); Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(junk());
            out.flush();
            String peer = "127.0.0.1:" + s.getLocalPort();
            List<String> lines = List.of();
            for (long end = System.nanoTime() + Duration.ofSeconds(10).toNanos(); lines.isEmpty() && System.nanoTime() < end; ) {
                Thread.sleep(20);
                lines = log.lines(Level.INFO, l -> true);
            }
            assertFalse(lines.isEmpty(), logger + " logged nothing about " + peer);
            for (String line : lines) {
                assertTrue(line.contains(peer), line);
                assertFalse(line.contains("[id: 0x") || line.contains("/127.0.0.1"), line);
            }
        }
    }

    private static ServerConfig config() {
        return ServerConfig.defaults().withAddress("127.0.0.1", 0);
    }

    @Test
    void mpaStartup() throws Exception {
        try (RpingServer s = RpingServer.start(config(), ServeOptions.on(IwarpStack.builder().threads(1).build()))) {
            junkIsLoggedWithThePeersAddress(s, "dev.iwarp.mpa");
        }
    }

    @Test
    void iftAdaption() throws Exception {
        WireOptions wire = new WireOptions();
        new picocli.CommandLine(wire).parseArgs("--wire", "ift");
        ServerConfig c = config();
        try (RpingServer s = RpingServer.start(c, ServeOptions.on(IwarpStack.builder().threads(1).build())
                .framing(wire.ift.framing(c.startupTimeoutMs(), c.ird(), c.ord())))) {
            junkIsLoggedWithThePeersAddress(s, "dev.iwarp.ift");
        }
    }

    @Test
    void vitcpConnectionSetup() throws Exception {
        try (RpingServer s = RpingServer.start(config(), ServeOptions.on(VitcpWire.server(VitcpConfig.defaults(),
                VitcpWire.DEFAULT_DISCRIMINATOR.getBytes(StandardCharsets.US_ASCII), false, 1)))) {
            junkIsLoggedWithThePeersAddress(s, "dev.iwarp.vitcp");
        }
    }

    @Test
    void tlsHandshake() throws Exception {
        TlsCertificates.CertifiedKey self = TlsCertificates.selfSigned("iwarp-server", Duration.ofDays(1));
        try (RpingServer s = RpingServer.start(config(), ServeOptions.on(IwarpStack.builder().threads(1).build()).tls(TlsSettings.builder().identity(self).build()))) {
            junkIsLoggedWithThePeersAddress(s, "dev.iwarp.bootstrap.tls");
        }
    }
}
