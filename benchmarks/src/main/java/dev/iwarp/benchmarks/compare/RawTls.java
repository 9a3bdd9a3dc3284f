package dev.iwarp.benchmarks.compare;

import dev.iwarp.bootstrap.tls.TlsCertificates;
import io.netty.handler.ssl.SslHandler;
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
 * The raw baseline of the TLS cases: Netty's own {@link SslHandler} over an {@link SSLEngine} from the
 * provider our stack uses (Bouncy Castle's JSSE over the JDK's JCA), TLS 1.3 only, the provider's default
 * cipher suite and record size (16 KiB of plaintext per record), the handler's default settings. The
 * ratio of a TLS case is then the price of our framing above the same TLS, not the price of TLS itself.
 * The client trusts exactly the server's self-signed certificate (PKIX with it as the only anchor).
 */
final class RawTls {
    private static final SSLContext SERVER;
    private static final SSLContext CLIENT;

    static {
        try {
            TlsCertificates.CertifiedKey self = TlsCertificates.selfSigned("compare-raw", Duration.ofDays(1));
            Provider jsse = new BouncyCastleJsseProvider();
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry("identity", self.key(), new char[0], self.chain().toArray(new X509Certificate[0]));
            ks.setCertificateEntry("anchor", self.certificate());
            KeyManagerFactory kmf = KeyManagerFactory.getInstance("PKIX", jsse);
            kmf.init(ks, new char[0]);
            TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX", jsse);
            tmf.init(ks);
            SERVER = SSLContext.getInstance("TLS", jsse);
            SERVER.init(kmf.getKeyManagers(), null, new SecureRandom());
            CLIENT = SSLContext.getInstance("TLS", jsse);
            CLIENT.init(null, tmf.getTrustManagers(), new SecureRandom());
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private RawTls() {
    }

    static SslHandler server() {
        return new SslHandler(engine(SERVER, false));
    }

    static SslHandler client() {
        return new SslHandler(engine(CLIENT, true));
    }

    private static SSLEngine engine(SSLContext ctx, boolean client) {
        SSLEngine e = ctx.createSSLEngine();
        e.setUseClientMode(client);
        e.setEnabledProtocols(new String[] {"TLSv1.3"});
        return e;
    }
}
