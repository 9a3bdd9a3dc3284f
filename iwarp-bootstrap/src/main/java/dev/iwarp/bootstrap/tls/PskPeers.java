package dev.iwarp.bootstrap.tls;

import org.bouncycastle.tls.AbstractTlsClient;
import org.bouncycastle.tls.AbstractTlsServer;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.CertificateRequest;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.PRFAlgorithm;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.PskIdentity;
import org.bouncycastle.tls.TlsAuthentication;
import org.bouncycastle.tls.TlsCredentials;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsPSKExternal;
import org.bouncycastle.tls.TlsServerCertificate;
import org.bouncycastle.tls.crypto.TlsCrypto;
import org.bouncycastle.tls.crypto.impl.jcajce.JcaTlsCryptoProvider;

import java.security.SecureRandom;
import java.util.Vector;

/**
 * Bouncy Castle TLS API peers for a TLS 1.3 external PSK (RFC 8446 §2.2, key exchange mode
 * psk_dhe_ke: the PSK authenticates, an ECDHE share gives forward secrecy). Bouncy Castle's JSSE
 * provider has no PSK configuration (JSSE has no PSK API), hence its TLS API here. The PSK's hash is
 * SHA-256, so the suites are the two TLS 1.3 suites over SHA-256.
 */
final class PskPeers {
    private static final int[] SUITES = {CipherSuite.TLS_AES_128_GCM_SHA256, CipherSuite.TLS_CHACHA20_POLY1305_SHA256};

    private PskPeers() {
    }

    /** The JDK's JCA underneath (AES-GCM with AES-NI), as for the certificate path ({@link TlsContexts#JSSE}). */
    static TlsCrypto crypto() {
        return new JcaTlsCryptoProvider().create(new SecureRandom());
    }

    /** Callbacks the adapter needs from the peer. */
    interface Events {
        void handshakeComplete();

        void closeNotifyReceived();
    }

    static TlsPSKExternal external(TlsCrypto crypto, TlsPsk psk) {
        return new BasicTlsPSKExternal(psk.identity(), crypto.createSecret(psk.key()), PRFAlgorithm.tls13_hkdf_sha256);
    }

    static final class Client extends AbstractTlsClient {
        private final TlsPsk psk;
        private final Events events;

        Client(TlsCrypto crypto, TlsPsk psk, Events events) {
            super(crypto);
            this.psk = psk;
            this.events = events;
        }

        @Override
        protected ProtocolVersion[] getSupportedVersions() {
            return ProtocolVersion.TLSv13.only();
        }

        @Override
        protected int[] getSupportedCipherSuites() {
            return SUITES.clone();
        }

        @Override
        @SuppressWarnings({"rawtypes", "unchecked"})
        public Vector getExternalPSKs() {
            Vector v = new Vector();
            v.add(external(getCrypto(), psk));
            return v;
        }

        @Override
        public TlsAuthentication getAuthentication() {
            return new TlsAuthentication() {
                @Override
                public void notifyServerCertificate(TlsServerCertificate serverCertificate) throws TlsFatalAlert {
                    // RFC 8446 §4.2.11: a server that accepted our PSK sends no certificate
                    throw new TlsFatalAlert(AlertDescription.handshake_failure,
                            "the server did not accept our PSK and sent a certificate instead");
                }

                @Override
                public TlsCredentials getClientCredentials(CertificateRequest certificateRequest) {
                    return null;
                }
            };
        }

        @Override
        public void notifyHandshakeComplete() {
            events.handshakeComplete();
        }

        @Override
        public void notifyAlertReceived(short level, short description) {
            if (description == AlertDescription.close_notify) {
                events.closeNotifyReceived();
            }
        }
    }

    static final class Server extends AbstractTlsServer {
        private final TlsPsk psk;
        private final Events events;

        Server(TlsCrypto crypto, TlsPsk psk, Events events) {
            super(crypto);
            this.psk = psk;
            this.events = events;
        }

        @Override
        protected ProtocolVersion[] getSupportedVersions() {
            return ProtocolVersion.TLSv13.only();
        }

        @Override
        protected int[] getSupportedCipherSuites() {
            return SUITES.clone();
        }

        @Override
        @SuppressWarnings("rawtypes")
        public TlsPSKExternal getExternalPSK(Vector identities) {
            for (Object o : identities) {
                if (psk.sameIdentity(((PskIdentity) o).getIdentity())) {
                    return external(getCrypto(), psk);
                }
            }
            return null;
        }

        @Override
        public TlsCredentials getCredentials() throws TlsFatalAlert {
            // asked only when no offered identity matched ours (we have no certificate)
            throw new TlsFatalAlert(AlertDescription.unknown_psk_identity, "the client offered no PSK identity we know");
        }

        @Override
        public void notifyHandshakeComplete() {
            events.handshakeComplete();
        }

        @Override
        public void notifyAlertReceived(short level, short description) {
            if (description == AlertDescription.close_notify) {
                events.closeNotifyReceived();
            }
        }
    }
}
