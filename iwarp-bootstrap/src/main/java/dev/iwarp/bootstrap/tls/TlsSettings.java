package dev.iwarp.bootstrap.tls;

import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * How the TLS layer below the framing authenticates and encrypts one side of a connection.
 * Immutable; build with {@link #builder()}.
 *
 * <ul>
 *   <li>Protocols: TLS 1.3 only by default ({@link Builder#protocols} adds {@code TLSv1.2}).</li>
 *   <li>Our identity: a private key and its certificate chain (PEM, PKCS#12, or in memory, e.g. a
 *       {@link TlsCertificates#selfSigned self-signed} one). A server needs one unless it uses a PSK.</li>
 *   <li>Whom we trust: certificates (PEM or PKCS#12) used as trust anchors, and/or a SHA-256 pin of the
 *       peer's certificate ({@link TlsCertificates#fingerprint}). A pin alone accepts exactly that
 *       certificate (while it is within its validity period) and needs no hostname match. With
 *       neither, a client trusts the JDK's default CAs.</li>
 *   <li>Client authentication ({@link ClientAuth}), off by default; hostname verification on the
 *       client, on by default (RFC 6125 via the provider's {@code HTTPS} endpoint identification).</li>
 *   <li>An external pre-shared key ({@link TlsPsk}) instead of certificates: TLS 1.3 {@code psk_dhe_ke}.</li>
 *   <li>The {@link TlsProvider} under the certificate path: {@link TlsProvider#defaultProvider()} unless set.</li>
 * </ul>
 */
public final class TlsSettings {
    /** TLS's largest record payload (RFC 8446 §5.1: 2^14 octets); MPA derives its MULPDU from it. */
    public static final int MAX_RECORD_PAYLOAD = 16_384;
    /** Default time for the TLS handshake to complete. */
    public static final long DEFAULT_HANDSHAKE_TIMEOUT_MILLIS = 10_000;

    /** Whether a server asks the client for a certificate. */
    public enum ClientAuth { NONE, OPTIONAL, REQUIRE }

    private final List<String> protocols;
    private final PrivateKey key;
    private final List<X509Certificate> chain;
    private final List<X509Certificate> trusted;
    private final byte[] pin;
    private final ClientAuth clientAuth;
    private final boolean hostnameVerification;
    private final String serverName;
    private final TlsPsk psk;
    private final long handshakeTimeoutMillis;
    private final TlsProvider provider;
    private TlsContexts.Engines engines; // built once, on first use

    private TlsSettings(Builder b) {
        this.protocols = List.copyOf(b.protocols);
        this.key = b.key;
        this.chain = List.copyOf(b.chain);
        this.trusted = List.copyOf(b.trusted);
        this.pin = b.pin == null ? null : b.pin.clone();
        this.clientAuth = b.clientAuth;
        this.hostnameVerification = b.hostnameVerification;
        this.serverName = b.serverName;
        this.psk = b.psk;
        this.handshakeTimeoutMillis = b.handshakeTimeoutMillis;
        this.provider = b.provider != null ? b.provider : TlsProvider.defaultProvider();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.protocols = new ArrayList<>(protocols);
        b.key = key;
        b.chain = new ArrayList<>(chain);
        b.trusted = new ArrayList<>(trusted);
        b.pin = pin;
        b.clientAuth = clientAuth;
        b.hostnameVerification = hostnameVerification;
        b.serverName = serverName;
        b.psk = psk;
        b.handshakeTimeoutMillis = handshakeTimeoutMillis;
        b.provider = provider;
        return b;
    }

    public List<String> protocols() {
        return protocols;
    }

    /** Our private key, or {@code null} (a client without a certificate, or PSK). */
    public PrivateKey key() {
        return key;
    }

    /** Our certificate chain, leaf first; empty without a key. */
    public List<X509Certificate> chain() {
        return chain;
    }

    /** Trust anchors for the peer's certificate; empty: the pin alone, or the JDK's CAs. */
    public List<X509Certificate> trusted() {
        return trusted;
    }

    /** SHA-256 of the peer's certificate (DER) we require, or {@code null}. */
    public byte[] pin() {
        return pin == null ? null : pin.clone();
    }

    public ClientAuth clientAuth() {
        return clientAuth;
    }

    public boolean hostnameVerification() {
        return hostnameVerification;
    }

    /** The name a client expects in the server's certificate (and sends as SNI); {@code null}: the host connected to. */
    public String serverName() {
        return serverName;
    }

    /** The external PSK, or {@code null} for certificates. */
    public TlsPsk psk() {
        return psk;
    }

    public long handshakeTimeoutMillis() {
        return handshakeTimeoutMillis;
    }

    /** The TLS implementation of the certificate path (an external PSK always runs on Bouncy Castle's TLS API). */
    public TlsProvider provider() {
        return provider;
    }

    /** What makes the engines of these settings ({@link #provider()}), built on first use. */
    synchronized TlsContexts.Engines engines() throws GeneralSecurityException {
        if (engines == null) {
            engines = TlsContexts.engines(this);
        }
        return engines;
    }

    @Override
    public String toString() {
        if (psk != null) {
            return "TLS 1.3 PSK identity " + psk.identityString();
        }
        StringBuilder sb = new StringBuilder(String.join("/", protocols));
        if (!chain.isEmpty()) {
            sb.append(", certificate ").append(chain.get(0).getSubjectX500Principal().getName());
        }
        if (pin != null) {
            sb.append(", pin ").append(TlsCertificates.formatFingerprint(pin));
        }
        if (!trusted.isEmpty()) {
            sb.append(", ").append(trusted.size()).append(" trusted certificate(s)");
        }
        if (clientAuth != ClientAuth.NONE) {
            sb.append(", client auth ").append(clientAuth.name().toLowerCase());
        }
        return sb.toString();
    }

    public static final class Builder {
        private List<String> protocols = List.of("TLSv1.3");
        private PrivateKey key;
        private List<X509Certificate> chain = new ArrayList<>();
        private List<X509Certificate> trusted = new ArrayList<>();
        private byte[] pin;
        private ClientAuth clientAuth = ClientAuth.NONE;
        private boolean hostnameVerification = true;
        private String serverName;
        private TlsPsk psk;
        private long handshakeTimeoutMillis = DEFAULT_HANDSHAKE_TIMEOUT_MILLIS;
        private TlsProvider provider;

        private Builder() {
        }

        /** {@code TLSv1.3} and/or {@code TLSv1.2}. */
        public Builder protocols(String... protocols) {
            if (protocols.length == 0) {
                throw new IllegalArgumentException("at least one TLS protocol");
            }
            for (String p : protocols) {
                if (!p.equals("TLSv1.3") && !p.equals("TLSv1.2")) {
                    throw new IllegalArgumentException("TLS protocol must be TLSv1.3 or TLSv1.2: " + p);
                }
            }
            this.protocols = Arrays.asList(protocols.clone());
            return this;
        }

        /** Our key and certificate chain (leaf first). */
        public Builder identity(PrivateKey key, List<X509Certificate> chain) {
            if (chain.isEmpty()) {
                throw new IllegalArgumentException("a key needs its certificate chain");
            }
            this.key = Objects.requireNonNull(key, "key");
            this.chain = new ArrayList<>(chain);
            return this;
        }

        /** Our identity from a generated or loaded {@link TlsCertificates.CertifiedKey}. */
        public Builder identity(TlsCertificates.CertifiedKey identity) {
            return identity(identity.key(), identity.chain());
        }

        /** Our identity from PEM files: a private key (PKCS#8, PKCS#1 or SEC 1) and its certificate chain. */
        public Builder identityPem(Path keyFile, Path certificateFile) throws IOException, GeneralSecurityException {
            return identity(TlsFiles.readPrivateKey(keyFile), TlsFiles.readCertificates(certificateFile));
        }

        /** Our identity from the first key entry of a PKCS#12 keystore. */
        public Builder identityPkcs12(Path keystore, char[] password) throws IOException, GeneralSecurityException {
            return identity(TlsFiles.readPkcs12Identity(keystore, password));
        }

        /** Trust these certificates as anchors for the peer's chain. */
        public Builder trust(List<X509Certificate> anchors) {
            this.trusted = new ArrayList<>(anchors);
            return this;
        }

        /** Trust the certificates of a PEM file or (by extension {@code .p12}/{@code .pfx}) a PKCS#12 keystore. */
        public Builder trust(Path file, char[] pkcs12Password) throws IOException, GeneralSecurityException {
            return trust(TlsFiles.readTrust(file, pkcs12Password));
        }

        /**
         * Require the peer's certificate to have this SHA-256 fingerprint: {@code SHA256:AB:CD:...}, or
         * 64 hex digits with or without colons.
         */
        public Builder pin(String fingerprint) {
            this.pin = TlsCertificates.parseFingerprint(fingerprint);
            return this;
        }

        public Builder clientAuth(ClientAuth clientAuth) {
            this.clientAuth = Objects.requireNonNull(clientAuth);
            return this;
        }

        /** Client: check the server's certificate names the host (on by default; a pin alone skips it). */
        public Builder hostnameVerification(boolean on) {
            this.hostnameVerification = on;
            return this;
        }

        /** Client: the name to expect in the server's certificate instead of the host connected to. */
        public Builder serverName(String name) {
            this.serverName = name;
            return this;
        }

        /** Use this external PSK instead of certificates (TLS 1.3, both sides the same). */
        public Builder psk(TlsPsk psk) {
            this.psk = psk;
            return this;
        }

        public Builder handshakeTimeoutMillis(long millis) {
            if (millis <= 0) {
                throw new IllegalArgumentException("handshake timeout must be positive: " + millis);
            }
            this.handshakeTimeoutMillis = millis;
            return this;
        }

        /** The TLS implementation of the certificate path; {@link TlsProvider#defaultProvider()} unless set. */
        public Builder provider(TlsProvider provider) {
            this.provider = Objects.requireNonNull(provider, "provider");
            return this;
        }

        /** @throws IllegalArgumentException when the key, certificates or trust cannot make a TLS context */
        public TlsSettings build() {
            TlsSettings s = new TlsSettings(this);
            if (psk == null) {
                try {
                    s.engines(); // configuration errors now, not on the first connection
                } catch (GeneralSecurityException e) {
                    throw new IllegalArgumentException("TLS settings unusable: " + e.getMessage(), e);
                }
            }
            return s;
        }
    }
}
