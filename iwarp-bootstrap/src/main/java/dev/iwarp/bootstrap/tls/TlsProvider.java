package dev.iwarp.bootstrap.tls;

import io.netty.handler.ssl.OpenSsl;

/**
 * The TLS implementation under Netty's {@code SslHandler} on the certificate path. An external PSK
 * always runs on Bouncy Castle's TLS API ({@code PskTlsHandler}): TLS 1.3 external PSKs have no API
 * in JSSE, and Netty's OpenSSL binding offers only the TLS 1.2 PSK callbacks.
 */
public enum TlsProvider {
    /**
     * Netty's OpenSSL binding (BoringSSL from {@code netty-tcnative-boringssl-static} and its native
     * file for the platform, when on the class path): records are sealed and opened in native code
     * straight between Netty's pooled direct buffers, nothing is allocated per record.
     */
    OPENSSL,
    /**
     * The JDK's own JSSE (SunJSSE): seals each record in place in the output buffer, but sets its
     * AES-GCM cipher up anew per record (about 7.5 KB allocated per 64 KiB message on each side).
     */
    JDK,
    /**
     * Bouncy Castle's JSSE over the JDK's JCA: its engine copies every record through fresh byte
     * arrays (the plaintext in, the sealed record out): about twice the payload allocated by the
     * sender, once by the receiver.
     */
    BCJSSE;

    /** Whether this provider can run here: OpenSSL needs Netty's native binding on the class path. */
    public boolean isAvailable() {
        return this != OPENSSL || OpenSsl.isAvailable();
    }

    /** The provider {@link TlsSettings} use unless told otherwise: OpenSSL when available, else the JDK's JSSE. */
    public static TlsProvider defaultProvider() {
        return OPENSSL.isAvailable() ? OPENSSL : JDK;
    }
}
