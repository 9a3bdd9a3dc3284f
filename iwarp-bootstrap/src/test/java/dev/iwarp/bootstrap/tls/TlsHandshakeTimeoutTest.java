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
import io.netty.channel.Channel;
import io.netty.util.concurrent.Future;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A TLS handshake that never completes ends at {@link TlsSettings#handshakeTimeoutMillis()} on either side: a
 * server that accepts TCP and then says nothing, and a client that connects and then says nothing. Neither holds
 * the connection for MPA's startup timeout, and the server never offers such a peer to its ULP.
 */
class TlsHandshakeTimeoutTest {
    private static final long TIMEOUT_MILLIS = 500;

    @SuppressWarnings("try") // held open by the try, never read
    @Test
    void clientGivesUpOnASilentServer() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             IwarpStack client = IwarpStack.builder().transport(Transport.NIO).threads(1).build()) {
            TlsSettings tls = TlsFixtures.client().toBuilder().handshakeTimeoutMillis(TIMEOUT_MILLIS).build();
            long start = System.nanoTime();
            Future<QueuePair> f = client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                    silent.getLocalPort()), ConnectOptions.of(client.allocPd()).tls(tls));
            try (Socket accepted = silent.accept()) { // accepted and never answered
                assertTrue(f.await(8, TimeUnit.SECONDS), "connect neither failed nor succeeded in 8 s");
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertFalse(f.isSuccess());
                TlsException e = assertInstanceOf(TlsException.class, f.cause());
                assertEquals(TlsException.Kind.HANDSHAKE_TIMEOUT, e.kind(), e.getMessage());
                assertTrue(ms >= TIMEOUT_MILLIS && ms < 5_000, "failed after " + ms + " ms");
            }
        }
    }

    @Test
    void serverClosesASilentClient() throws Exception {
        List<IwarpConnectionRequest> offered = new CopyOnWriteArrayList<>();
        try (IwarpStack server = IwarpStack.builder().transport(Transport.NIO).threads(1).build()) {
            TlsSettings tls = TlsFixtures.server(TlsFixtures.SERVER).toBuilder().handshakeTimeoutMillis(TIMEOUT_MILLIS)
                    .build();
            Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0), ListenOptions.mpa(MpaSettings.defaults()).tls(tls),
                    req -> {
                        offered.add(req);
                        req.accept(server.allocPd(), new CompletionQueue(), new CompletionQueue(), new byte[0]);
                    });
            try (Socket silent = new Socket()) {
                silent.connect(listener.localAddress());
                silent.setSoTimeout(8_000);
                long start = System.nanoTime();
                InputStream in = silent.getInputStream();
                int octets = 0;
                while (in.read() >= 0) { // whatever the server sends (an alert at most), then its close
                    octets++;
                }
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertTrue(ms < 5_000, "the server held a silent client for " + ms + " ms");
                assertTrue(octets < 64, "the server sent " + octets + " octets to a peer that never spoke");
            }
            assertTrue(offered.isEmpty(), "the server offered a peer that never finished TLS to its ULP");
            listener.close().sync();
        }
    }
}
