package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.tls.TlsCertificates;
import dev.iwarp.bootstrap.tls.TlsPsk;
import dev.iwarp.bootstrap.tls.TlsSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static dev.iwarp.server.ToolRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** ping, bench and demo with {@code --tls} against an in-process serve inside TLS; the options' errors. */
class TlsCommandsTest {
    @TempDir
    Path dir;

    private static RpingServer server(TlsSettings tls) throws Exception {
        // the default limits, but 60 s for a first octet, the handshake and MPA's startup: a TLS client starting cold
        // on a loaded machine (load 30-36) took more than the default 2 s from its connect to its ClientHello, and
        // more than 10 s for the handshake; the clients below get --timeout 60000 for theirs
        ServerLimits d = ServerLimits.defaults();
        ServerConfig c = ServerConfig.defaults();
        return RpingServer.start(c.withAddress("127.0.0.1", 0).withLimits(c.maxConnections(), 60_000,
                        c.idleTimeoutSec()).withLimits(new ServerLimits(
                        d.maxStartups(), d.maxPerSource(), d.messageDeadlineMs(), d.maxReadSize(), d.sourcePrefixV4(),
                        d.sourcePrefixV6(), d.maxStartupsPerSource(), 60_000, d.drainTimeoutSec(), d.allowMarkers(),
                        d.tlsHandshakesPerSec())),
                ServeOptions.on(IwarpStack.builder().threads(1).build())
                        .tls(tls.toBuilder().handshakeTimeoutMillis(60_000).build()));
    }

    @Test
    void pingAndBenchPinTheServersSelfSignedCertificate() throws Exception {
        TlsCertificates.CertifiedKey self = TlsCertificates.selfSigned("iwarp-server", Duration.ofDays(1));
        try (RpingServer s = server(TlsSettings.builder().identity(self).build())) {
            String at = "127.0.0.1:" + s.port();
            ToolRun ping = run("ping", at, "--tls", "--pin", self.fingerprint(), "-C", "3", "-v", "-V", "--timeout", "60000");
            assertEquals(0, ping.code(), ping.err() + ping.out());
            assertTrue(ping.out().contains("MULPDU 16378, inside TLSv1.3 TLS_AES_"), ping.out());
            assertTrue(ping.out().contains("3/3 pings of 64 octets verified"), ping.out());

            ToolRun bench = run("bench", at, "--tls", "--pin", self.fingerprint(), "--op", "write", "--size", "65536",
                    "--iterations", "50", "--timeout", "60000");
            assertEquals(0, bench.code(), bench.err() + bench.out());

            ToolRun wrongPin = run("ping", at, "--tls", "--pin", TlsCertificates.selfSigned("x", Duration.ofDays(1)).fingerprint(),
                    "-C", "1");
            assertEquals(1, wrongPin.code());
            assertTrue(wrongPin.out().contains("does not match the pin"), wrongPin.out());

            ToolRun plain = run("ping", at, "-C", "1");
            assertEquals(1, plain.code());
            assertTrue(plain.out().contains("TLS required"), plain.out());
        }
    }

    @Test
    void pingWithAPskFromAFile() throws Exception {
        Path psk = dir.resolve("psk");
        Files.writeString(psk, "node1:00112233445566778899aabbccddeeff\n", StandardCharsets.US_ASCII);
        Path wrong = dir.resolve("wrong");
        Files.writeString(wrong, "node1:ffeeddccbbaa99887766554433221100\n", StandardCharsets.US_ASCII);
        try (RpingServer s = server(TlsSettings.builder().psk(TlsPsk.fromFile(psk)).build())) {
            String at = "127.0.0.1:" + s.port();
            ToolRun ok = run("ping", at, "--tls", "--psk-file", psk.toString(), "-C", "2", "-v", "-V", "--timeout", "60000");
            assertEquals(0, ok.code(), ok.err() + ok.out());
            assertTrue(ok.out().contains("inside TLSv1.3 external PSK"), ok.out());
            ToolRun bad = run("ping", at, "--tls", "--psk-file", wrong.toString(), "-C", "1");
            assertEquals(1, bad.code());
            assertTrue(bad.out().contains("decrypt_error"), bad.out());
        }
    }

    @Test
    void demoOverTlsCapturesTheDecryptedStream() throws Exception {
        Path pcap = dir.resolve("demo.pcap");
        ToolRun demo = run("demo", "--tls", "--pcap", pcap.toString());
        assertEquals(0, demo.code(), demo.err() + demo.out());
        assertTrue(demo.out().contains("TLS 1.3") && demo.out().contains("demo: OK"), demo.out());
        String octets = new String(Files.readAllBytes(pcap), StandardCharsets.ISO_8859_1);
        assertTrue(octets.contains("MPA ID Req Frame") && octets.contains("MPA ID Rep Frame"),
                "the capture holds the MPA stream inside TLS, in the clear");
    }

    /**
     * serve gives the TLS handshake its {@code --startup-timeout} (MPA's startup then has as long again), not a fixed
     * 10 s: a client slower than that (a cold JVM on a loaded machine took longer) can be given more, and a short
     * startup timeout closes a stalled handshake as early. serve runs as a process of its own (it serves until a signal).
     */
    @Test
    void serveGivesTheTlsHandshakeItsStartupTimeout() throws Exception {
        Path log = dir.resolve("serve.log");
        Process serve = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dlogback.configurationFile=" + Path.of("target", "classes", "logback.xml").toAbsolutePath(),
                "-cp", ReadmeServeLogTest.mainClassPath(), Main.class.getName(), "serve", "--tls", "--address",
                "127.0.0.1", "--port", "0", "--startup-timeout", "700", "--first-octet-timeout", "60000")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            java.util.regex.Matcher listening = awaitLine(log, "listening on 127\\.0\\.0\\.1:(\\d+)", serve);
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", Integer.parseInt(listening.group(1)))) {
                // a ClientHello's record header (RFC 8446 §5.1), then nothing
                s.getOutputStream().write(new byte[] {0x16, 0x03, 0x01, 0x00, 0x40});
                assertTrue(ServeGuardTest.closedWithin(s, 60_000), "serve closed the stalled handshake");
            }
            awaitLine(log, "no TLS handshake within 700 ms", serve);
        } finally {
            serve.destroy();
            if (!serve.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                serve.destroyForcibly();
            }
        }
    }

    /**
     * Waits until {@code log} has a match of {@code regex}, while {@code p} runs: 3 minutes at most (serve starting
     * cold, its certificate made, took more than a minute to listen at load 34).
     */
    private static java.util.regex.Matcher awaitLine(Path log, String regex, Process p) throws Exception {
        java.util.regex.Pattern pattern = java.util.regex.Pattern.compile(regex);
        for (long end = System.nanoTime() + 180_000_000_000L; System.nanoTime() < end; Thread.sleep(50)) {
            java.util.regex.Matcher m = pattern.matcher(Files.readString(log));
            if (m.find()) {
                return m;
            }
            assertTrue(p.isAlive(), () -> "serve exited: " + read(log));
        }
        throw new AssertionError("no line matching " + regex + " in serve's log: " + read(log));
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }

    @Test
    void optionErrorsExitTwoWithOneLine() {
        ToolRun noTls = run("ping", "127.0.0.1:1", "--pin", "SHA256:00");
        assertEquals(2, noTls.code());
        assertTrue(noTls.err().contains("need --tls"), noTls.err());
        ToolRun badPin = run("ping", "127.0.0.1:1", "--tls", "--pin", "SHA256:00");
        assertEquals(2, badPin.code());
        assertTrue(badPin.err().contains("a pin is SHA256: followed by 32 hex octets"), badPin.err());
        ToolRun both = run("ping", "127.0.0.1:1", "--tls", "--psk-file", "a", "--pin", "SHA256:00");
        assertEquals(2, both.code());
        assertTrue(both.err().contains("a PSK replaces certificates"), both.err());
        ToolRun vitcp = run("ping", "127.0.0.1:1", "--tls", "--wire", "vitcp");
        assertEquals(2, vitcp.code());
        assertFalse(vitcp.err().isBlank());
    }
}
