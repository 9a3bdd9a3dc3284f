package dev.iwarp.bootstrap.tls;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import java.net.Socket;
import java.security.MessageDigest;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Date;
import java.util.function.Supplier;

/**
 * The trust decision of the TLS layer: the delegate's PKIX validation (and hostname check) when
 * trust anchors are configured, and the pin when one is: the peer's certificate must have the pinned
 * SHA-256 fingerprint and be within its validity period. A PKIX failure caused by a certificate
 * outside its validity period, or by an untrusted (self-signed) root, is reported as such (the
 * JDK's path builder says only that it could not build a valid chain).
 */
final class CheckedTrustManager extends X509ExtendedTrustManager {
    private final byte[] pin;
    private final Supplier<X509ExtendedTrustManager> delegateSupplier;
    private volatile X509ExtendedTrustManager delegate;
    private volatile boolean resolved;

    /**
     * {@code pin} may be null (PKIX only); {@code delegate} is asked on first use (loading the JDK's CAs
     * takes seconds, and a server without client authentication never needs them) and may answer
     * null (the pin only).
     */
    CheckedTrustManager(byte[] pin, Supplier<X509ExtendedTrustManager> delegate) {
        this.pin = pin == null ? null : pin.clone();
        this.delegateSupplier = delegate;
    }

    private X509ExtendedTrustManager delegate() {
        if (!resolved) {
            synchronized (this) {
                if (!resolved) {
                    delegate = delegateSupplier.get();
                    resolved = true;
                }
            }
        }
        return delegate;
    }

    /** Names the certificate of the chain that is expired or not yet valid, if one is. */
    private static CertificateException explain(X509Certificate[] chain, CertificateException e) {
        if (!isPathFailure(e)) {
            return e; // e.g. the host name check, which says what it found
        }
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
        X509Certificate leaf = chain == null || chain.length == 0 ? null : chain[chain.length - 1];
        if (leaf != null && leaf.getSubjectX500Principal().equals(leaf.getIssuerX500Principal())) {
            return new CertificateException("the peer's certificate " + chain[0].getSubjectX500Principal().getName()
                    + (chain.length > 1 ? " chains to the self-signed " + leaf.getSubjectX500Principal().getName() : " is self-signed")
                    + ", which is not among the trusted certificates (trust it, or pin its fingerprint "
                    + TlsCertificates.fingerprint(chain[0]) + ")", e);
        }
        if (leaf != null) {
            return new CertificateException("the peer's certificate " + chain[0].getSubjectX500Principal().getName()
                    + " does not chain to a trusted certificate (its chain ends at one issued by "
                    + leaf.getIssuerX500Principal().getName() + ")", e);
        }
        return e;
    }

    private static boolean isPathFailure(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof CertPathBuilderException || c instanceof CertPathValidatorException
                    || (c.getMessage() != null && c.getMessage().contains("valid chain"))) {
                return true;
            }
        }
        return false;
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
        X509ExtendedTrustManager delegate = delegate();
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
        X509ExtendedTrustManager delegate = delegate();
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
        X509ExtendedTrustManager delegate = delegate();
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
        X509ExtendedTrustManager delegate = delegate();
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
        X509ExtendedTrustManager delegate = delegate();
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
        X509ExtendedTrustManager delegate = delegate();
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
        X509ExtendedTrustManager delegate = delegate();
        return delegate != null ? delegate.getAcceptedIssuers() : new X509Certificate[0];
    }
}
