package dev.iwarp.benchmarks.compare;

import dev.iwarp.bootstrap.tls.TlsCertificates;
import dev.iwarp.bootstrap.tls.TlsLayer;
import dev.iwarp.bootstrap.tls.TlsProvider;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import org.bouncycastle.jsse.provider.BouncyCastleJsseProvider;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Provider;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;

/**
 * The raw baseline of the TLS cases: Netty's own {@link SslHandler} over an {@link SSLEngine} of the provider our
 * stack runs on in the same run (compare's {@code --tls-provider}, by default {@link TlsProvider#defaultProvider()}:
 * Netty's OpenSSL binding when present), TLS 1.3 only,
 * the provider's default cipher suite and record size (16 KiB of plaintext per record), the handler's default
 * settings but the one ours changes ({@link TlsLayer#WRAP_DATA_SIZE}). The ratio of a TLS case is then the price of our framing above the same TLS, not the price of TLS
 * itself. The client trusts exactly the server's self-signed certificate (PKIX with it as the only anchor).
 */
final class RawTls {
    /** Compare's {@code --tls-provider} (set before this class is first used), else the default; ours runs on it too. */
    static final TlsProvider PROVIDER = Compare.tlsProviderChosen != null ? Compare.tlsProviderChosen
            : TlsProvider.defaultProvider();
    private static final java.util.logging.Logger BC_JSSE_LOG = java.util.logging.Logger.getLogger("org.bouncycastle.jsse");
    private static final SSLContext SERVER;
    private static final SSLContext CLIENT;
    private static final SslContext OPENSSL_SERVER;
    private static final SslContext OPENSSL_CLIENT;

    static {
        try {
            TlsCertificates.CertifiedKey self = TlsCertificates.selfSigned("compare-raw", Duration.ofDays(1));
            X509Certificate[] chain = self.chain().toArray(new X509Certificate[0]);
            if (PROVIDER == TlsProvider.OPENSSL) {
                OPENSSL_SERVER = SslContextBuilder.forServer(self.key(), chain).sslProvider(SslProvider.OPENSSL)
                        .protocols("TLSv1.3").build();
                OPENSSL_CLIENT = SslContextBuilder.forClient().sslProvider(SslProvider.OPENSSL).protocols("TLSv1.3")
                        .trustManager(self.certificate()).endpointIdentificationAlgorithm(null).build();
                SERVER = null;
                CLIENT = null;
            } else {
                if (PROVIDER == TlsProvider.BCJSSE && BC_JSSE_LOG.getLevel() == null) {
                    BC_JSSE_LOG.setLevel(java.util.logging.Level.SEVERE); // as our stack does: no INFO lines
                }
                Provider jsse = PROVIDER == TlsProvider.BCJSSE ? new BouncyCastleJsseProvider() : null;
                KeyStore ks = KeyStore.getInstance("PKCS12");
                ks.load(null, null);
                ks.setKeyEntry("identity", self.key(), new char[0], chain);
                ks.setCertificateEntry("anchor", self.certificate());
                KeyManagerFactory kmf = jsse == null ? KeyManagerFactory.getInstance("PKIX")
                        : KeyManagerFactory.getInstance("PKIX", jsse);
                kmf.init(ks, new char[0]);
                TrustManagerFactory tmf = jsse == null ? TrustManagerFactory.getInstance("PKIX")
                        : TrustManagerFactory.getInstance("PKIX", jsse);
                tmf.init(ks);
                SERVER = jsse == null ? SSLContext.getInstance("TLS") : SSLContext.getInstance("TLS", jsse);
                SERVER.init(kmf.getKeyManagers(), null, new SecureRandom());
                CLIENT = jsse == null ? SSLContext.getInstance("TLS") : SSLContext.getInstance("TLS", jsse);
                CLIENT.init(null, tmf.getTrustManagers(), new SecureRandom());
                OPENSSL_SERVER = null;
                OPENSSL_CLIENT = null;
            }
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private RawTls() {
    }

    static SslHandler server(ByteBufAllocator alloc) {
        return withOurWrapSize(OPENSSL_SERVER != null ? OPENSSL_SERVER.newHandler(alloc)
                : new SslHandler(engine(SERVER, false)));
    }

    static SslHandler client(ByteBufAllocator alloc) {
        return withOurWrapSize(OPENSSL_CLIENT != null ? OPENSSL_CLIENT.newHandler(alloc)
                : new SslHandler(engine(CLIENT, true)));
    }

    /** The one setting ours changes from the handler's defaults: four records' worth of plaintext per wrap round. */
    private static SslHandler withOurWrapSize(SslHandler h) {
        h.setWrapDataSize(TlsLayer.WRAP_DATA_SIZE);
        return h;
    }

    private static SSLEngine engine(SSLContext ctx, boolean client) {
        SSLEngine e = ctx.createSSLEngine();
        e.setUseClientMode(client);
        e.setEnabledProtocols(new String[] {"TLSv1.3"});
        return e;
    }
}
