package dev.iwarp.bootstrap.tls;

import org.bouncycastle.jsse.provider.BouncyCastleJsseProvider;

import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Provider;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * Builds {@link SSLEngine}s from {@link TlsSettings} with Bouncy Castle's JSSE provider, not
 * registered globally.
 */
final class TlsContexts {
    /**
     * Bouncy Castle's JSSE over the JDK's JCA providers: its record layer then encrypts with the JDK's
     * AES-GCM, which the JIT turns into AES-NI/CLMUL instructions; Bouncy Castle's own JCA provider
     * does it in plain Java (measured: about 15 MB/s against hundreds with the JDK's, 1 MiB Writes).
     */
    static final Provider JSSE = new BouncyCastleJsseProvider();
    private static final char[] STORE_PASSWORD = new char[0];
    /**
     * Bouncy Castle's JSSE logs every handshake step and alert through java.util.logging at INFO; the
     * TLS layer logs one line per failure itself, so unless the user configured this logger it only
     * reports SEVERE. Held here so the setting is not collected with the logger.
     */
    private static final java.util.logging.Logger BC_JSSE_LOG = java.util.logging.Logger.getLogger("org.bouncycastle.jsse");

    static {
        if (BC_JSSE_LOG.getLevel() == null) {
            BC_JSSE_LOG.setLevel(java.util.logging.Level.SEVERE);
        }
    }

    private TlsContexts() {
    }

    static SSLContext context(TlsSettings s) throws GeneralSecurityException {
        SSLContext ctx = SSLContext.getInstance("TLS", JSSE);
        ctx.init(keyManagers(s), trustManagers(s), new SecureRandom());
        return ctx;
    }

    private static KeyManager[] keyManagers(TlsSettings s) throws GeneralSecurityException {
        if (s.key() == null) {
            return null;
        }
        KeyStore ks = emptyStore();
        ks.setKeyEntry("identity", s.key(), STORE_PASSWORD, s.chain().toArray(new X509Certificate[0]));
        KeyManagerFactory kmf = KeyManagerFactory.getInstance("PKIX", JSSE);
        kmf.init(ks, STORE_PASSWORD);
        return kmf.getKeyManagers();
    }

    private static TrustManager[] trustManagers(TlsSettings s) throws GeneralSecurityException {
        byte[] pin = s.pin();
        if (!s.trusted().isEmpty()) {
            X509ExtendedTrustManager pkix = pkix(s.trusted()); // now: a bad anchor is a settings error
            return new TrustManager[] {new CheckedTrustManager(pin, () -> pkix)};
        }
        if (pin != null) {
            return new TrustManager[] {new CheckedTrustManager(pin, () -> null)};
        }
        return new TrustManager[] {new CheckedTrustManager(null, () -> {
            try {
                return pkix(List.of()); // the JDK's CAs, on first use
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("cannot load the JDK's trusted certificates: " + e.getMessage(), e);
            }
        })};
    }

    /** PKIX validation against {@code anchors}, or the JDK's CAs when empty. */
    private static X509ExtendedTrustManager pkix(List<X509Certificate> anchors) throws GeneralSecurityException {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX", JSSE);
        if (anchors.isEmpty()) {
            tmf.init((KeyStore) null);
        } else {
            KeyStore ts = emptyStore();
            for (int i = 0; i < anchors.size(); i++) {
                ts.setCertificateEntry("anchor-" + i, anchors.get(i));
            }
            tmf.init(ts);
        }
        for (TrustManager tm : tmf.getTrustManagers()) {
            if (tm instanceof X509ExtendedTrustManager) {
                return (X509ExtendedTrustManager) tm;
            }
        }
        throw new GeneralSecurityException("no X509ExtendedTrustManager from the PKIX TrustManagerFactory");
    }

    private static KeyStore emptyStore() throws GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try {
            ks.load(null, null);
        } catch (java.io.IOException e) {
            throw new GeneralSecurityException(e);
        }
        return ks;
    }

    /** A client engine for {@code remote}: SNI and hostname verification for the name we expect. */
    static SSLEngine clientEngine(SSLContext ctx, TlsSettings s, SocketAddress remote) {
        String host = s.serverName();
        int port = -1;
        if (remote instanceof InetSocketAddress) {
            InetSocketAddress a = (InetSocketAddress) remote;
            if (host == null) {
                host = a.getHostString();
            }
            port = a.getPort();
        }
        SSLEngine e = host == null ? ctx.createSSLEngine() : ctx.createSSLEngine(host, port);
        e.setUseClientMode(true);
        SSLParameters p = e.getSSLParameters();
        p.setProtocols(s.protocols().toArray(new String[0]));
        // a pin names the exact certificate; with trust anchors the name must match too (RFC 6125)
        if (s.hostnameVerification() && !(s.pin() != null && s.trusted().isEmpty())) {
            p.setEndpointIdentificationAlgorithm("HTTPS");
        }
        if (host != null && !isIpLiteral(host)) {
            p.setServerNames(List.of(new SNIHostName(host)));
        }
        e.setSSLParameters(p);
        return e;
    }

    static SSLEngine serverEngine(SSLContext ctx, TlsSettings s) {
        SSLEngine e = ctx.createSSLEngine();
        e.setUseClientMode(false);
        SSLParameters p = e.getSSLParameters();
        p.setProtocols(s.protocols().toArray(new String[0]));
        if (s.clientAuth() == TlsSettings.ClientAuth.REQUIRE) {
            p.setNeedClientAuth(true);
        } else if (s.clientAuth() == TlsSettings.ClientAuth.OPTIONAL) {
            p.setWantClientAuth(true);
        }
        e.setSSLParameters(p);
        return e;
    }

    private static boolean isIpLiteral(String host) {
        return host.contains(":") || host.chars().allMatch(c -> c == '.' || Character.isDigit(c));
    }
}
