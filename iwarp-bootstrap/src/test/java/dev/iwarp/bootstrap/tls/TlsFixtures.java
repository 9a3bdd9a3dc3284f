package dev.iwarp.bootstrap.tls;

import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** Certificates for the TLS tests, generated once per JVM: a CA, its server and client, and bad ones. */
final class TlsFixtures {
    static final TlsCertificates.CertifiedKey CA;
    static final TlsCertificates.CertifiedKey OTHER_CA;
    static final TlsCertificates.CertifiedKey SERVER;
    static final TlsCertificates.CertifiedKey CLIENT;
    static final TlsCertificates.CertifiedKey EXPIRED_SERVER;
    static final TlsCertificates.CertifiedKey WRONG_NAME_SERVER;
    static final TlsCertificates.CertifiedKey STRANGER;
    static final TlsPsk PSK = TlsPsk.parse("node1:00112233445566778899aabbccddeeff");

    static {
        try {
            Instant now = Instant.now();
            Instant from = now.minus(Duration.ofDays(1));
            Instant to = now.plus(Duration.ofDays(30));
            CA = TlsCertificates.issue(null, "iwarp test CA", List.of(), from, to, true);
            OTHER_CA = TlsCertificates.issue(null, "another CA", List.of(), from, to, true);
            SERVER = TlsCertificates.issue(CA, "server", List.of("localhost", "127.0.0.1"), from, to, false);
            CLIENT = TlsCertificates.issue(CA, "client", List.of("client.example"), from, to, false);
            EXPIRED_SERVER = TlsCertificates.issue(CA, "expired", List.of("localhost", "127.0.0.1"),
                    now.minus(Duration.ofDays(60)), now.minus(Duration.ofDays(1)), false);
            WRONG_NAME_SERVER = TlsCertificates.issue(CA, "elsewhere", List.of("elsewhere.example"), from, to, false);
            STRANGER = TlsCertificates.issue(OTHER_CA, "stranger", List.of("localhost", "127.0.0.1"), from, to, false);
        } catch (GeneralSecurityException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private TlsFixtures() {
    }

    /** A server with {@code identity} that requires a client certificate from {@link #CA}. */
    static TlsSettings server(TlsCertificates.CertifiedKey identity) {
        return TlsSettings.builder().identity(identity).trust(List.of(CA.certificate()))
                .clientAuth(TlsSettings.ClientAuth.REQUIRE).build();
    }

    /** A client with {@link #CLIENT}'s certificate that trusts {@link #CA}. */
    static TlsSettings client() {
        return TlsSettings.builder().identity(CLIENT).trust(List.of(CA.certificate())).build();
    }

    static TlsSettings psk(TlsPsk psk) {
        return TlsSettings.builder().psk(psk).build();
    }
}
