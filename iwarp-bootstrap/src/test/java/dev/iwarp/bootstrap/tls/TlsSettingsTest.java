package dev.iwarp.bootstrap.tls;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Settings from files, fingerprints and PSK text: what users type and keep on disk. */
class TlsSettingsTest {
    @TempDir
    Path dir;

    @Test
    void pemKeyAndChainRoundTrip() throws Exception {
        TlsCertificates.CertifiedKey k = TlsFixtures.SERVER;
        Path key = dir.resolve("key.pem");
        Path cert = dir.resolve("cert.pem");
        TlsCertificates.writePem(k, key, cert);
        assertTrue(Files.readString(key).startsWith("-----BEGIN PRIVATE KEY-----"));
        TlsSettings s = TlsSettings.builder().identityPem(key, cert).trust(cert, null).build();
        assertEquals(k.key(), s.key());
        assertEquals(k.chain(), s.chain()); // leaf and its CA
        assertEquals(k.chain(), s.trusted());
    }

    @Test
    void pkcs12IdentityAndTrust() throws Exception {
        char[] password = "secret".toCharArray();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("server", TlsFixtures.SERVER.key(), password, TlsFixtures.SERVER.chain().toArray(new Certificate[0]));
        Path p12 = dir.resolve("server.p12");
        try (OutputStream out = Files.newOutputStream(p12)) {
            ks.store(out, password);
        }
        TlsSettings s = TlsSettings.builder().identityPkcs12(p12, password).trust(p12, password).build();
        assertEquals(TlsFixtures.SERVER.certificate(), s.chain().get(0));
        assertTrue(s.trusted().contains(TlsFixtures.SERVER.certificate()));
        assertThrows(java.io.IOException.class, () -> TlsSettings.builder().identityPkcs12(p12, "wrong".toCharArray()));
    }

    @Test
    void aFileWithoutAKeySaysSo() throws Exception {
        Path cert = dir.resolve("cert.pem");
        TlsCertificates.writePem(TlsFixtures.CLIENT, dir.resolve("k.pem"), cert);
        Exception e = assertThrows(java.security.GeneralSecurityException.class,
                () -> TlsSettings.builder().identityPem(cert, cert));
        assertTrue(e.getMessage().contains("no unencrypted private key"), e.getMessage());
    }

    @Test
    void fingerprintIsSha256OfTheDerAsOpensslPrintsIt() throws Exception {
        TlsCertificates.CertifiedKey k = TlsCertificates.selfSigned("x", Duration.ofDays(1));
        byte[] sha = MessageDigest.getInstance("SHA-256").digest(k.certificate().getEncoded());
        String f = k.fingerprint();
        assertEquals("SHA256:" + HexFormat.ofDelimiter(":").withUpperCase().formatHex(sha), f);
        assertArrayEquals(sha, TlsCertificates.parseFingerprint(f));
        assertArrayEquals(sha, TlsCertificates.parseFingerprint(HexFormat.of().formatHex(sha)));
        assertArrayEquals(sha, TlsCertificates.parseFingerprint("sha256:" + f.substring(7).toLowerCase()));
        assertThrows(IllegalArgumentException.class, () -> TlsCertificates.parseFingerprint("SHA256:AB:CD"));
        assertThrows(IllegalArgumentException.class, () -> TlsCertificates.parseFingerprint(f.replace('A', 'Z')));
    }

    @Test
    void pskText() throws Exception {
        TlsPsk p = TlsPsk.parse(" node1:00112233445566778899AABBCCDDEEFF\n");
        assertEquals("node1", p.identityString());
        assertEquals(16, p.key().length);
        assertFalse(p.toString().contains("0011"), "the key never appears in text");
        Path f = dir.resolve("psk");
        Files.writeString(f, "# comment\n\nid-2:" + "ab".repeat(32) + "\n", StandardCharsets.UTF_8);
        assertEquals("id-2", TlsPsk.fromFile(f).identityString());
        assertThrows(IllegalArgumentException.class, () -> TlsPsk.parse("node1"));
        assertThrows(IllegalArgumentException.class, () -> TlsPsk.parse("node1:0011")); // 2 octets: too short
        assertThrows(IllegalArgumentException.class, () -> TlsPsk.parse("node1:xyz"));
    }

    @Test
    void protocolsAreTls13ByDefaultAndOnlyTls12Or13() {
        assertEquals(List.of("TLSv1.3"), TlsSettings.builder().build().protocols());
        assertThrows(IllegalArgumentException.class, () -> TlsSettings.builder().protocols("TLSv1.1"));
    }
}
