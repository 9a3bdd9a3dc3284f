package dev.iwarp.bootstrap.tls;

import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsFatalAlertReceived;

import javax.net.ssl.SSLException;

/**
 * Why the TLS layer below the framing failed a connection, with the TLS alert (RFC 8446 §6) when one
 * was sent or received.
 */
public final class TlsException extends SSLException {
    private static final long serialVersionUID = 1L;

    /** What went wrong, in the TLS layer's words. */
    public enum Kind {
        /** The peer's first octets are not a TLS record (a plaintext iWARP peer, or not TLS at all). */
        NOT_TLS,
        /** The handshake failed: certificate, pin, PSK, protocol version, alert, or the peer closed. */
        HANDSHAKE,
        /** The handshake did not complete in time. */
        HANDSHAKE_TIMEOUT,
        /** The peer closed TCP without a close_notify alert (RFC 8446 §6.1): the stream may be truncated. */
        TRUNCATED,
        /** A record failed to decrypt or was malformed after the handshake. */
        BAD_RECORD
    }

    private final Kind kind;
    private final int alert;

    public TlsException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.alert = alertOf(cause);
    }

    public Kind kind() {
        return kind;
    }

    /** The TLS AlertDescription sent or received, or -1 when none is known. */
    public int alert() {
        return alert;
    }

    /** The TLS alert's name, e.g. {@code bad_certificate}, or {@code null}. */
    public String alertName() {
        return alert < 0 ? null : AlertDescription.getName((short) alert);
    }

    /** The code of the alert named {@code name} (RFC 8446 §6), or -1. */
    static short alertCode(String name) {
        for (short code = 0; code < 256; code++) {
            if (name.equals(AlertDescription.getName(code))) {
                return code;
            }
        }
        return -1;
    }

    private static boolean hasCertificateRejection(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof java.security.cert.CertificateException) {
                return true;
            }
        }
        return false;
    }

    static int alertOf(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof TlsFatalAlert) {
                return ((TlsFatalAlert) c).getAlertDescription();
            }
            if (c instanceof TlsFatalAlertReceived) {
                return ((TlsFatalAlertReceived) c).getAlertDescription();
            }
        }
        // the JDK's and OpenSSL's engines name alerts in their messages only
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            String name = TlsLifecycle.receivedAlert(c);
            if (name == null && c instanceof javax.net.ssl.SSLException) {
                name = TlsLifecycle.sentAlert(c);
            }
            short code = name == null ? -1 : alertCode(name);
            if (code >= 0) {
                return code;
            }
        }
        if (hasCertificateRejection(t)) {
            return AlertDescription.certificate_unknown; // what our trust manager's rejection is sent as (RFC 8446 §6.2)
        }
        return -1;
    }
}
