package dev.iwarp.bootstrap.tls;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import java.net.Socket;
import java.security.MessageDigest;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Date;

/**
 * The trust decision of the TLS layer: the delegate's PKIX validation (and hostname check) when
 * trust anchors are configured, and the pin when one is: the peer's certificate must have the pinned
 * SHA-256 fingerprint and be within its validity period. A PKIX failure caused by a certificate
 * outside its validity period is reported as such (the JDK's path builder says only that it could
 * not build a valid chain).
 */
final class CheckedTrustManager extends X509ExtendedTrustManager {
    private final byte[] pin;
    private final X509ExtendedTrustManager delegate;

    /** {@code pin} may be null (PKIX only), {@code delegate} too (the pin only), not both. */
    CheckedTrustManager(byte[] pin, X509ExtendedTrustManager delegate) {
        this.pin = pin == null ? null : pin.clone();
        this.delegate = delegate;
    }

    /** Names the certificate of the chain that is expired or not yet valid, if one is. */
    private static CertificateException explain(X509Certificate[] chain, CertificateException e) {
        Date now = new Date();
        for (X509Certificate c : chain == null ? new X509Certificate[0] : chain) {
            if (now.after(c.getNotAfter())) {
                return new CertificateException("certificate " + c.getSubjectX500Principal().getName() + " expired on "
                        + c.getNotAfter().toInstant(), e);
            }
            if (now.before(c.getNotBefore())) {
                return new CertificateException("certificate " + c.getSubjectX500Principal().getName()
                        + " is not valid before " + c.getNotBefore().toInstant(), e);
            }
        }
        return e;
    }

    private void checkPin(X509Certificate[] chain) throws CertificateException {
        if (pin == null) {
            return;
        }
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
            try {
                delegate.checkClientTrusted(chain, authType, engine);
            } catch (CertificateException e) {
                throw explain(chain, e);
            }
        }
        checkPin(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        if (delegate != null) {
            try {
                delegate.checkServerTrusted(chain, authType, engine);
            } catch (CertificateException e) {
                throw explain(chain, e);
            }
        }
        checkPin(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        if (delegate != null) {
            try {
                delegate.checkClientTrusted(chain, authType, socket);
            } catch (CertificateException e) {
                throw explain(chain, e);
            }
        }
        checkPin(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        if (delegate != null) {
            try {
                delegate.checkServerTrusted(chain, authType, socket);
            } catch (CertificateException e) {
                throw explain(chain, e);
            }
        }
        checkPin(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        if (delegate != null) {
            try {
                delegate.checkClientTrusted(chain, authType);
            } catch (CertificateException e) {
                throw explain(chain, e);
            }
        }
        checkPin(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        if (delegate != null) {
            try {
                delegate.checkServerTrusted(chain, authType);
            } catch (CertificateException e) {
                throw explain(chain, e);
            }
        }
        checkPin(chain);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return delegate != null ? delegate.getAcceptedIssuers() : new X509Certificate[0];
    }
}
