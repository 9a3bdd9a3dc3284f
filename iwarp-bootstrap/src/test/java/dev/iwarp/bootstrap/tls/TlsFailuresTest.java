package dev.iwarp.bootstrap.tls;

import dev.iwarp.bootstrap.ListenOptions;
import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpConnectionRequest;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.bootstrap.Transport;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.QueuePair;
import ch.qos.logback.classic.Level;
import dev.iwarp.testkit.LogCapture;
import io.netty.channel.Channel;
import io.netty.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.ParameterizedTest;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each way a TLS connection must fail: a clear error at the side that finds the fault, one log line,
 * a closed connection, fast (well inside MPA's 10 s startup timeout), and no leak (the testkit's
 * extension fails the test on a leak report). The server never offers such a peer to the ULP.
 */
class TlsFailuresTest {
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<IwarpConnectionRequest> offered = new CopyOnWriteArrayList<>();
    private final LogCapture log = LogCapture.of(TlsLayer.class.getName());
    private IwarpStack server;
    private IwarpStack client;

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        log.close();
    }

    private IwarpStack stack() {
        IwarpStack s = IwarpStack.builder().transport(Transport.NIO).threads(1).build();
        closeables.add(s);
        return s;
    }

    private Channel listen(TlsSettings tls) throws InterruptedException {
        server = stack();
        client = stack();
        Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0), ListenOptions.mpa(MpaSettings.defaults()).tls(tls),
                req -> {
                    offered.add(req);
                    req.accept(server.allocPd(), new CompletionQueue(), new CompletionQueue(), new byte[0]);
                });
        closeables.add(() -> listener.close().sync());
        return listener;
    }

    /** Connects with {@code tls} and returns why it failed, checking it failed fast. */
    private Throwable failure(Channel listener, TlsSettings tls) throws InterruptedException {
        long start = System.nanoTime();
        Future<QueuePair> f = client.connect(listener.localAddress(), ConnectOptions.of(client.allocPd()).tls(tls));
        assertTrue(f.await(8, TimeUnit.SECONDS), "connect neither failed nor succeeded in 8 s");
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertFalse(f.isSuccess(), "connected although it must not");
        assertTrue(ms < 5000, "took " + ms + " ms: a timeout, not a fast failure");
        assertTrue(offered.isEmpty(), "the server offered the connection to its ULP");
        return f.cause();
    }

    private static TlsException tls(Throwable t) {
        return assertInstanceOf(TlsException.class, t);
    }

    /**
     * Every provider refuses the certificate with certificate_unknown (RFC 8446 §6.2) and our reason. Netty's OpenSSL
     * binding sent internal_error for a refusal it could not map to an X.509 error code, until our refusal carried one.
     */
    @ParameterizedTest
    @EnumSource(value = TlsProvider.class, names = {"BCJSSE", "OPENSSL"})
    void serverCertificateFromAnUntrustedCa(TlsProvider provider) throws Exception {
        Assumptions.assumeTrue(provider.isAvailable(), provider + " does not load here");
        Channel l = listen(TlsSettings.builder().identity(TlsFixtures.STRANGER).provider(provider).build());
        TlsException e = tls(failure(l, TlsFixtures.client().toBuilder().provider(provider).build()));
        assertEquals(TlsException.Kind.HANDSHAKE, e.kind());
        assertTrue(e.getMessage().contains("CN=stranger chains to the self-signed CN=another CA, which is not among the trusted"), e.getMessage());
        assertTrue(e.getMessage().contains("(we sent TLS alert certificate_unknown(46))"), e.getMessage());
        assertEquals("certificate_unknown", e.alertName());
        log.await(Level.WARN, "the peer sent TLS alert certificate_unknown(46)");
    }

    @Test
    void clientWithoutCertificateWhenTheServerRequiresOne() throws Exception {
        Channel l = listen(TlsFixtures.server(TlsFixtures.SERVER));
        // TLS 1.3: the client has finished (and started MPA) before the server refuses it
        TlsException e = tls(failure(l, TlsSettings.builder().trust(List.of(TlsFixtures.CA.certificate())).build()));
        assertEquals(TlsException.Kind.BAD_RECORD, e.kind());
        assertTrue(e.getMessage().contains("the peer sent TLS alert certificate_required"), e.getMessage());
        log.await(Level.WARN, "we sent TLS alert certificate_required");
    }

    @Test
    void clientCertificateFromAnUntrustedCaIsNotOffered() throws Exception {
        // the server names its CAs (certificate_authorities); the client has none of theirs to send
        Channel l = listen(TlsFixtures.server(TlsFixtures.SERVER));
        TlsException e = tls(failure(l, TlsSettings.builder().identity(TlsFixtures.STRANGER)
                .trust(List.of(TlsFixtures.CA.certificate())).build()));
        assertTrue(e.getMessage().contains("the peer sent TLS alert certificate_required"), e.getMessage());
        log.await(Level.WARN, "we sent TLS alert certificate_required");
    }

    @Test
    void expiredServerCertificate() throws Exception {
        Channel l = listen(TlsSettings.builder().identity(TlsFixtures.EXPIRED_SERVER).build());
        TlsException e = tls(failure(l, TlsFixtures.client()));
        assertTrue(e.getMessage().contains("certificate CN=expired expired on "), e.getMessage());
    }

    @Test
    void serverCertificateForAnotherName() throws Exception {
        Channel l = listen(TlsSettings.builder().identity(TlsFixtures.WRONG_NAME_SERVER).build());
        TlsException e = tls(failure(l, TlsFixtures.client()));
        // the PKIX check's words (Bouncy Castle's: "... name found matching IP address"; the JDK's: "... names matching
        // IP address ... found")
        assertTrue(e.getMessage().contains("No subject alternative name") && e.getMessage().contains("IP address 127.0.0.1"),
                e.getMessage());
    }

    @Test
    void pinMismatch() throws Exception {
        Channel l = listen(TlsSettings.builder().identity(TlsFixtures.STRANGER).build());
        TlsException e = tls(failure(l, TlsSettings.builder().pin(TlsFixtures.SERVER.fingerprint()).build()));
        assertTrue(e.getMessage().contains("does not match the pin " + TlsFixtures.SERVER.fingerprint()), e.getMessage());
    }

    @Test
    void wrongPskKey() throws Exception {
        Channel l = listen(TlsFixtures.psk(TlsFixtures.PSK));
        TlsException e = tls(failure(l, TlsFixtures.psk(TlsPsk.parse("node1:ffeeddccbbaa99887766554433221100"))));
        assertEquals("decrypt_error", e.alertName()); // RFC 8446 §4.2.11: the binder does not verify
        log.await(Level.WARN, "Invalid PSK binder");
    }

    @Test
    void unknownPskIdentity() throws Exception {
        Channel l = listen(TlsFixtures.psk(TlsFixtures.PSK));
        TlsException e = tls(failure(l, TlsFixtures.psk(TlsPsk.parse("node2:00112233445566778899aabbccddeeff"))));
        assertEquals("unknown_psk_identity", e.alertName());
        log.await(Level.WARN, "the client offered no PSK identity we know");
    }

    @Test
    void plaintextClientAgainstTlsServer() throws Exception {
        Channel l = listen(TlsFixtures.server(TlsFixtures.SERVER));
        Throwable e = failure(l, null);
        assertTrue(e.getMessage().contains("TLS required"), e.getMessage()); // the server's MPA Reply says why
        log.await(Level.WARN, "the peer sent a plaintext MPA Request");
    }

    @Test
    void tlsClientAgainstPlaintextServer() throws Exception {
        Channel l = listen(null);
        TlsException e = tls(failure(l, TlsFixtures.client()));
        assertTrue(e.getMessage().contains("the peer closed the connection during the TLS handshake"), e.getMessage());
    }
}
