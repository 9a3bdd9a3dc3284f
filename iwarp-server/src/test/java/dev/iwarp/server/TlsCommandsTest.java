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
        return RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()).tls(tls));
    }

    @Test
    void pingAndBenchPinTheServersSelfSignedCertificate() throws Exception {
        TlsCertificates.CertifiedKey self = TlsCertificates.selfSigned("iwarp-server", Duration.ofDays(1));
        try (RpingServer s = server(TlsSettings.builder().identity(self).build())) {
            String at = "127.0.0.1:" + s.port();
            ToolRun ping = run("ping", at, "--tls", "--pin", self.fingerprint(), "-C", "3", "-v", "-V");
            assertEquals(0, ping.code(), ping.err() + ping.out());
            assertTrue(ping.out().contains("MULPDU 16378, inside TLSv1.3 TLS_AES_"), ping.out());
            assertTrue(ping.out().contains("3/3 pings of 64 octets verified"), ping.out());

            ToolRun bench = run("bench", at, "--tls", "--pin", self.fingerprint(), "--op", "write", "--size", "65536",
                    "--iterations", "50");
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
            ToolRun ok = run("ping", at, "--tls", "--psk-file", psk.toString(), "-C", "2", "-v", "-V");
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
