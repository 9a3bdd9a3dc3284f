package dev.iwarp.bootstrap.tls;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import java.net.Socket;
import java.security.MessageDigest;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;

/**
 * Accepts a peer whose certificate has the pinned SHA-256 fingerprint and is within its validity
 * period; with a delegate (trust anchors configured too) the chain must also pass the delegate's
 * PKIX validation (and hostname check).
 */
final class PinTrustManager extends X509ExtendedTrustManager {
    private final byte[] pin;
    private final X509ExtendedTrustManager delegate;

    PinTrustManager(byte[] pin, X509ExtendedTrustManager delegate) {
        this.pin = pin.clone();
        this.delegate = delegate;
    }

    private void checkPin(X509Certificate[] chain) throws CertificateException {
        if (chain == null || chain.length == 0) {
            throw new CertificateException("peer sent no certificate, expected the pinned " + TlsCertificates.formatFingerprint(pin));
        }
        byte[] got = TlsCertificates.sha256(chain[0]);
        if (!MessageDigest.isEqual(got, pin)) {
            throw new CertificateException("peer certificate " + TlsCertificates.formatFingerprint(got)
                    + " does not match the pin " + TlsCertificates.formatFingerprint(pin));
        }
        chain[0].checkValidity(); // CertificateExpiredException / NotYetValidException name the dates
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        if (delegate != null) {
            delegate.checkClientTrusted(chain, authType, engine);
        }
        checkPin(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        if (delegate != null) {
            delegate.checkServerTrusted(chain, authType, engine);
        }
        checkPin(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        if (delegate != null) {
            delegate.checkClientTrusted(chain, authType, socket);
        }
        checkPin(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        if (delegate != null) {
            delegate.checkServerTrusted(chain, authType, socket);
        }
        checkPin(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        if (delegate != null) {
            delegate.checkClientTrusted(chain, authType);
        }
        checkPin(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        if (delegate != null) {
            delegate.checkServerTrusted(chain, authType);
        }
        checkPin(chain);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return delegate != null ? delegate.getAcceptedIssuers() : new X509Certificate[0];
    }
}
