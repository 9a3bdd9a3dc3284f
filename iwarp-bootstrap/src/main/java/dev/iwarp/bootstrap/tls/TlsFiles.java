package dev.iwarp.bootstrap.tls;

import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.util.io.pem.PemObjectGenerator;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** Reads keys and certificates from PEM files and PKCS#12 keystores (Bouncy Castle's PEM parser). */
final class TlsFiles {
    private TlsFiles() {
    }

    static PrivateKey readPrivateKey(Path file) throws IOException, GeneralSecurityException {
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.US_ASCII); PEMParser p = new PEMParser(r)) {
            JcaPEMKeyConverter conv = new JcaPEMKeyConverter();
            for (Object o = p.readObject(); o != null; o = p.readObject()) {
                if (o instanceof PrivateKeyInfo) {          // -----BEGIN PRIVATE KEY----- (PKCS#8)
                    return conv.getPrivateKey((PrivateKeyInfo) o);
                }
                if (o instanceof PEMKeyPair) {              // RSA PRIVATE KEY (PKCS#1), EC PRIVATE KEY (SEC 1)
                    return conv.getKeyPair((PEMKeyPair) o).getPrivate();
                }
            }
        }
        throw new GeneralSecurityException(file + ": no unencrypted private key (PEM PRIVATE KEY, RSA or EC PRIVATE KEY)");
    }

    static List<X509Certificate> readCertificates(Path file) throws IOException, GeneralSecurityException {
        List<X509Certificate> certs = new ArrayList<>();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.US_ASCII); PEMParser p = new PEMParser(r)) {
            JcaX509CertificateConverter conv = new JcaX509CertificateConverter();
            for (Object o = p.readObject(); o != null; o = p.readObject()) {
                if (o instanceof X509CertificateHolder) {
                    certs.add(conv.getCertificate((X509CertificateHolder) o));
                }
            }
        }
        if (certs.isEmpty()) {
            throw new GeneralSecurityException(file + ": no PEM CERTIFICATE in it");
        }
        return certs;
    }

    private static KeyStore pkcs12(Path file, char[] password) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(file)) {
            ks.load(in, password);
        }
        return ks;
    }

    static TlsCertificates.CertifiedKey readPkcs12Identity(Path file, char[] password)
            throws IOException, GeneralSecurityException {
        KeyStore ks = pkcs12(file, password);
        for (String alias : Collections.list(ks.aliases())) {
            if (ks.isKeyEntry(alias)) {
                Key k = ks.getKey(alias, password);
                Certificate[] chain = ks.getCertificateChain(alias);
                if (k instanceof PrivateKey && chain != null && chain.length > 0) {
                    List<X509Certificate> c = new ArrayList<>();
                    for (Certificate x : chain) {
                        c.add((X509Certificate) x);
                    }
                    return new TlsCertificates.CertifiedKey((PrivateKey) k, c);
                }
            }
        }
        throw new GeneralSecurityException(file + ": no private key entry with a certificate chain");
    }

    /** Every certificate of a PEM file, or of a PKCS#12 keystore when the name ends in .p12 or .pfx. */
    static List<X509Certificate> readTrust(Path file, char[] password) throws IOException, GeneralSecurityException {
        String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        if (!name.endsWith(".p12") && !name.endsWith(".pfx")) {
            return readCertificates(file);
        }
        KeyStore ks = pkcs12(file, password);
        List<X509Certificate> certs = new ArrayList<>();
        for (String alias : Collections.list(ks.aliases())) {
            Certificate c = ks.getCertificate(alias);
            if (c instanceof X509Certificate) {
                certs.add((X509Certificate) c);
            }
        }
        if (certs.isEmpty()) {
            throw new GeneralSecurityException(file + ": no certificate in the keystore");
        }
        return certs;
    }

    /** PEM text of a key or certificates (for files a test or a tool writes). */
    static String pem(Object... objects) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            for (Object o : objects) {
                if (o instanceof PemObjectGenerator) {
                    w.writeObject((PemObjectGenerator) o);
                } else {
                    w.writeObject(o);
                }
            }
        }
        return out.toString();
    }
}
