package dev.iwarp.bootstrap.tls;

import io.netty.handler.ssl.OpenSslCertificateException;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;

/**
 * Our trust decision ({@link CheckedTrustManager}) under Netty's OpenSSL engine, which turns a refusal into the alert
 * it sends by the refusal's X.509 verification code: a plain {@link CertificateException} becomes
 * X509_V_ERR_UNSPECIFIED and the alert internal_error (80), which tells the peer that we failed, not that its
 * certificate did. A refusal goes out as X509_V_ERR_SUBJECT_ISSUER_MISMATCH here, which BoringSSL answers with
 * certificate_unknown (46, RFC 8446 §6.2: the certificate is unacceptable), the alert the JSSE providers send; an
 * expired or not yet valid certificate keeps Netty's own code (certificate_expired).
 */
final class OpenSslTrust extends X509ExtendedTrustManager {
    /** The X.509 verification code of our refusals, X509_V_ERR_SUBJECT_ISSUER_MISMATCH: BoringSSL's default alert. */
    static final int REFUSAL_CODE = 29;
    /** The alert BoringSSL sends for {@link #REFUSAL_CODE} (what the serve README's samples show the peer get). */
    static final String REFUSAL_ALERT = "certificate_unknown(46)";

    private final X509ExtendedTrustManager checked;

    OpenSslTrust(X509ExtendedTrustManager checked) {
        this.checked = checked;
    }

    /** The alert we sent when {@code c} is our refusal under OpenSSL, else null. */
    static String alertSent(Throwable c) {
        return c instanceof OpenSslCertificateException && ((OpenSslCertificateException) c).errorCode() == REFUSAL_CODE
                ? REFUSAL_ALERT : null;
    }

    private static CertificateException refused(CertificateException e) {
        if (e instanceof java.security.cert.CertificateExpiredException
                || e instanceof java.security.cert.CertificateNotYetValidException) {
            return e; // Netty maps these to their own codes (certificate_expired)
        }
        return new OpenSslCertificateException(e.getMessage(), e, REFUSAL_CODE);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        try {
            checked.checkClientTrusted(chain, authType, engine);
        } catch (CertificateException e) {
            throw refused(e);
        }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        try {
            checked.checkServerTrusted(chain, authType, engine);
        } catch (CertificateException e) {
            throw refused(e);
        }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        try {
            checked.checkClientTrusted(chain, authType, socket);
        } catch (CertificateException e) {
            throw refused(e);
        }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        try {
            checked.checkServerTrusted(chain, authType, socket);
        } catch (CertificateException e) {
            throw refused(e);
        }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        try {
            checked.checkClientTrusted(chain, authType);
        } catch (CertificateException e) {
            throw refused(e);
        }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        try {
            checked.checkServerTrusted(chain, authType);
        } catch (CertificateException e) {
            throw refused(e);
        }
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return checked.getAcceptedIssuers();
    }
}
