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

    static int alertOf(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof TlsFatalAlert) {
                return ((TlsFatalAlert) c).getAlertDescription();
            }
            if (c instanceof TlsFatalAlertReceived) {
                return ((TlsFatalAlertReceived) c).getAlertDescription();
            }
        }
        return -1;
    }
}
