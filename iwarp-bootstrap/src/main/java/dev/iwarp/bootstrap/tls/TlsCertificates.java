package dev.iwarp.bootstrap.tls;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * Certificates for the TLS layer: self-signed ones (what {@code serve --tls} makes when given no
 * files), certificates issued by a small CA (tests: client authentication, an expired certificate),
 * and SHA-256 fingerprints for pinning. Keys are ECDSA P-256; names cover {@code localhost},
 * {@code 127.0.0.1} and {@code ::1} unless told otherwise.
 */
public final class TlsCertificates {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String PREFIX = "SHA256:";

    private TlsCertificates() {
    }

    /** A private key with its certificate chain, leaf first. Immutable. */
    public static final class CertifiedKey {
        private final PrivateKey key;
        private final List<X509Certificate> chain;

        public CertifiedKey(PrivateKey key, List<X509Certificate> chain) {
            this.key = key;
            this.chain = List.copyOf(chain);
        }

        public PrivateKey key() {
            return key;
        }

        public List<X509Certificate> chain() {
            return chain;
        }

        public X509Certificate certificate() {
            return chain.get(0);
        }

        /** {@code SHA256:AB:CD:...} of the leaf certificate: what a peer pins. */
        public String fingerprint() {
            return TlsCertificates.fingerprint(certificate());
        }
    }

    /** A self-signed certificate for {@code localhost}, valid from an hour ago for {@code validity}. */
    public static CertifiedKey selfSigned(String commonName, Duration validity) throws GeneralSecurityException {
        Instant now = Instant.now();
        return issue(null, commonName, List.of("localhost", "127.0.0.1", "::1"), now.minus(Duration.ofHours(1)),
                now.plus(validity), false);
    }

    /**
     * A certificate for {@code names} (DNS names or IP literals) valid from {@code notBefore} to
     * {@code notAfter}, signed by {@code issuer} (self-signed when {@code null}); {@code ca} makes it a
     * CA that may sign others.
     */
    public static CertifiedKey issue(CertifiedKey issuer, String commonName, List<String> names, Instant notBefore,
                                     Instant notAfter, boolean ca) throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
        KeyPair pair = g.generateKeyPair();
        X500Name subject = new X500Name("CN=" + commonName);
        X500Name issuerName = issuer == null ? subject
                : X500Name.getInstance(issuer.certificate().getSubjectX500Principal().getEncoded());
        PrivateKey signingKey = issuer == null ? pair.getPrivate() : issuer.key();
        try {
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuerName, new BigInteger(64, RANDOM).abs(),
                    Date.from(notBefore), Date.from(notAfter), subject, pair.getPublic());
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(ca ? KeyUsage.keyCertSign | KeyUsage.digitalSignature
                    : KeyUsage.digitalSignature));
            if (!names.isEmpty()) {
                List<GeneralName> alt = new ArrayList<>();
                for (String n : names) {
                    alt.add(new GeneralName(isIpLiteral(n) ? GeneralName.iPAddress : GeneralName.dNSName, n));
                }
                b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(alt.toArray(new GeneralName[0])));
            }
            X509Certificate cert = new JcaX509CertificateConverter()
                    .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signingKey)));
            List<X509Certificate> chain = new ArrayList<>();
            chain.add(cert);
            if (issuer != null) {
                chain.addAll(issuer.chain());
            }
            return new CertifiedKey(pair.getPrivate(), chain);
        } catch (OperatorCreationException | IOException e) {
            throw new GeneralSecurityException("cannot build certificate: " + e.getMessage(), e);
        }
    }

    /**
     * Writes the key (PKCS#8 PEM, readable by its owner only where the file system allows) and the
     * certificate chain (PEM) to two files, e.g. for {@code --cert/--key} or a peer's {@code --trust}.
     */
    public static void writePem(CertifiedKey k, Path keyFile, Path certificateFile) throws IOException {
        Files.writeString(certificateFile, TlsFiles.pem(k.chain().toArray()), StandardCharsets.US_ASCII);
        Files.deleteIfExists(keyFile);
        try {
            Files.createFile(keyFile, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            Files.createFile(keyFile);
        }
        Files.writeString(keyFile, TlsFiles.pem(new JcaPKCS8Generator(k.key(), null)), StandardCharsets.US_ASCII);
    }

    private static boolean isIpLiteral(String n) {
        return n.contains(":") || n.chars().allMatch(c -> c == '.' || Character.isDigit(c));
    }

    /** SHA-256 of the certificate's DER encoding. */
    public static byte[] sha256(X509Certificate cert) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(cert.getEncoded());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 unavailable or certificate not encodable", e);
        }
    }

    /** {@code SHA256:AB:CD:...}: SHA-256 of the DER encoding, as {@code openssl x509 -fingerprint -sha256} shows it. */
    public static String fingerprint(X509Certificate cert) {
        return formatFingerprint(sha256(cert));
    }

    static String formatFingerprint(byte[] sha256) {
        return PREFIX + HexFormat.ofDelimiter(":").withUpperCase().formatHex(sha256);
    }

    /** Parses {@code SHA256:AB:CD:...} or 64 hex digits (colons optional, any case). */
    public static byte[] parseFingerprint(String text) {
        String t = text.strip();
        if (t.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
            t = t.substring(PREFIX.length());
        }
        t = t.replace(":", "").toLowerCase(Locale.ROOT);
        if (t.length() != 64 || !t.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            throw new IllegalArgumentException("a pin is SHA256: followed by 32 hex octets (64 digits, colons optional)");
        }
        return HexFormat.of().parseHex(t);
    }
}
