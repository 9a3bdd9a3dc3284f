package dev.iwarp.bootstrap.tls;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import org.bouncycastle.jsse.provider.BouncyCastleJsseProvider;

import javax.net.ssl.SSLException;
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
 * Builds {@link SSLEngine}s from {@link TlsSettings} with the settings' {@link TlsProvider}: a JSSE
 * {@link SSLContext} (the JDK's, or Bouncy Castle's provider, not registered globally), or Netty's
 * OpenSSL context. The engine's parameters (protocols, SNI, hostname verification, client
 * authentication) are set the same way for each.
 */
final class TlsContexts {
    /** Makes the TLS handlers (Netty's {@link SslHandler} over a new engine) of one {@link TlsSettings}. */
    interface Engines {
        /** {@code host} may be null (no name known). */
        SslHandler client(ByteBufAllocator alloc, String host, int port);

        SslHandler server(ByteBufAllocator alloc);
    }

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

    static Engines engines(TlsSettings s) throws GeneralSecurityException {
        switch (s.provider()) {
            case OPENSSL:
                return openSsl(s);
            case JDK:
                return jsse(s, null);
            default:
                return jsse(s, JSSE);
        }
    }

    /** {@code provider} null: the JDK's own JSSE. */
    private static Engines jsse(TlsSettings s, Provider provider) throws GeneralSecurityException {
        SSLContext ctx = provider == null ? SSLContext.getInstance("TLS") : SSLContext.getInstance("TLS", provider);
        ctx.init(keyManagers(s, provider), trustManagers(s, provider), new SecureRandom());
        return new Engines() {
            @Override
            public SslHandler client(ByteBufAllocator alloc, String host, int port) {
                return new SslHandler(host == null ? ctx.createSSLEngine() : ctx.createSSLEngine(host, port));
            }

            @Override
            public SslHandler server(ByteBufAllocator alloc) {
                return new SslHandler(ctx.createSSLEngine());
            }
        };
    }

    /**
     * Netty's OpenSSL context (not reference counted: the settings may live as long as the JVM). The
     * trust decision is ours ({@link CheckedTrustManager}, its PKIX part the JDK's), as with JSSE.
     */
    private static Engines openSsl(TlsSettings s) throws GeneralSecurityException {
        if (!TlsProvider.OPENSSL.isAvailable()) {
            throw new GeneralSecurityException("TLS provider OPENSSL needs Netty's OpenSSL binding"
                    + " (netty-tcnative-boringssl-static with the native file for this platform): "
                    + io.netty.handler.ssl.OpenSsl.unavailabilityCause());
        }
        SslContext client;
        SslContext server;
        try {
            // Netty's OpenSSL contexts are either a client's or a server's
            client = openSslBuilder(s, false).build();
            server = s.key() == null ? null : openSslBuilder(s, true).build();
        } catch (SSLException e) {
            throw new GeneralSecurityException("OpenSSL refused the TLS settings: " + e.getMessage(), e);
        }
        // newHandler, not newEngine: the engine then opens every whole record it is given in one call (Netty's
        // jdkCompatibilityMode off), as a raw Netty user of OpenSSL gets it
        return new Engines() {
            @Override
            public SslHandler client(ByteBufAllocator alloc, String host, int port) {
                return host == null ? client.newHandler(alloc) : client.newHandler(alloc, host, port);
            }

            @Override
            public SslHandler server(ByteBufAllocator alloc) {
                if (server == null) {
                    throw new IllegalStateException("a TLS server needs an identity (a key and its certificate)");
                }
                return server.newHandler(alloc);
            }
        };
    }

    private static SslContextBuilder openSslBuilder(TlsSettings s, boolean server) throws GeneralSecurityException {
        X509Certificate[] chain = s.chain().toArray(new X509Certificate[0]);
        SslContextBuilder b = server ? SslContextBuilder.forServer(s.key(), chain) : SslContextBuilder.forClient();
        if (!server && s.key() != null) {
            b.keyManager(s.key(), chain);
        }
        return b.sslProvider(SslProvider.OPENSSL)
                .protocols(s.protocols())
                .trustManager(new OpenSslTrust((X509ExtendedTrustManager) trustManagers(s, null)[0]))
                .endpointIdentificationAlgorithm(null) // set per engine (clientHandler), as for JSSE
                .clientAuth(s.clientAuth() == TlsSettings.ClientAuth.REQUIRE ? ClientAuth.REQUIRE
                        : s.clientAuth() == TlsSettings.ClientAuth.OPTIONAL ? ClientAuth.OPTIONAL : ClientAuth.NONE);
    }

    private static KeyManager[] keyManagers(TlsSettings s, Provider provider) throws GeneralSecurityException {
        if (s.key() == null) {
            return null;
        }
        KeyStore ks = emptyStore();
        ks.setKeyEntry("identity", s.key(), STORE_PASSWORD, s.chain().toArray(new X509Certificate[0]));
        KeyManagerFactory kmf = provider == null ? KeyManagerFactory.getInstance("PKIX")
                : KeyManagerFactory.getInstance("PKIX", provider);
        kmf.init(ks, STORE_PASSWORD);
        return kmf.getKeyManagers();
    }

    private static TrustManager[] trustManagers(TlsSettings s, Provider provider) throws GeneralSecurityException {
        byte[] pin = s.pin();
        if (!s.trusted().isEmpty()) {
            X509ExtendedTrustManager pkix = pkix(s.trusted(), provider); // now: a bad anchor is a settings error
            return new TrustManager[] {new CheckedTrustManager(pin, () -> pkix)};
        }
        if (pin != null) {
            return new TrustManager[] {new CheckedTrustManager(pin, () -> null)};
        }
        return new TrustManager[] {new CheckedTrustManager(null, () -> {
            try {
                return pkix(List.of(), provider); // the JDK's CAs, on first use
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("cannot load the JDK's trusted certificates: " + e.getMessage(), e);
            }
        })};
    }

    /** PKIX validation against {@code anchors}, or the JDK's CAs when empty. */
    private static X509ExtendedTrustManager pkix(List<X509Certificate> anchors, Provider provider)
            throws GeneralSecurityException {
        TrustManagerFactory tmf = provider == null ? TrustManagerFactory.getInstance("PKIX")
                : TrustManagerFactory.getInstance("PKIX", provider);
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

    /** The TLS handler of a client of {@code remote}: SNI and hostname verification for the name we expect. */
    static SslHandler clientHandler(Engines engines, ByteBufAllocator alloc, TlsSettings s, SocketAddress remote) {
        String host = s.serverName();
        int port = -1;
        if (remote instanceof InetSocketAddress) {
            InetSocketAddress a = (InetSocketAddress) remote;
            if (host == null) {
                host = a.getHostString();
            }
            port = a.getPort();
        }
        SslHandler h = engines.client(alloc, host, port);
        h.setWrapDataSize(TlsLayer.WRAP_DATA_SIZE);
        SSLEngine e = h.engine();
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
        return h;
    }

    static SslHandler serverHandler(Engines engines, ByteBufAllocator alloc, TlsSettings s) {
        SslHandler h = engines.server(alloc);
        h.setWrapDataSize(TlsLayer.WRAP_DATA_SIZE);
        SSLEngine e = h.engine();
        e.setUseClientMode(false);
        SSLParameters p = e.getSSLParameters();
        p.setProtocols(s.protocols().toArray(new String[0]));
        if (s.clientAuth() == TlsSettings.ClientAuth.REQUIRE) {
            p.setNeedClientAuth(true);
        } else if (s.clientAuth() == TlsSettings.ClientAuth.OPTIONAL) {
            p.setWantClientAuth(true);
        }
        e.setSSLParameters(p);
        return h;
    }

    private static boolean isIpLiteral(String host) {
        return host.contains(":") || host.chars().allMatch(c -> c == '.' || Character.isDigit(c));
    }
}
