package dev.iwarp.server;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Misbehaving clients get closed, and {@code serve} keeps serving normal pings afterwards. */
class BadClientsTest {
    private RpingServer server;
    private IwarpStack clientStack;

    @BeforeEach
    void start() throws Exception {
        // the startup timeout also bounds the good clients' startups: 2 s, not less, on a loaded machine
        ServerConfig config = ServerConfig.defaults().withAddress("127.0.0.1", 0).withLimits(2, 2000, 0);
        server = RpingServer.start(config, ServeOptions.on(IwarpStack.builder().threads(1).build()));
        clientStack = IwarpStack.builder().threads(1).build();
    }

    @AfterEach
    void stop() {
        clientStack.close();
        server.close();
    }

    /** Reads until the server closes; returns the octets received before that. */
    private byte[] readUntilClosed(Socket s) throws IOException {
        s.setSoTimeout(20_000); // a generous bound, not a timing assertion
        InputStream in = s.getInputStream();
        return in.readAllBytes();
    }

    private void normalPingStillWorks() throws Exception {
        try (RpingClient client = RpingClient.connect(clientStack, server.localAddress(), RpingClient.rpingSettings(false),
                64, 10_000)) {
            for (int n = 0; n < 3; n++) {
                assertArrayEquals(RpingClient.pingData(n, 'A' + n, 64), client.ping(n));
            }
        }
    }

    private void awaitNoSessions() throws InterruptedException {
        awaitNoSessions(server);
    }

    private static void awaitNoSessions(RpingServer s) throws InterruptedException {
        for (int i = 0; i < 2000 && !s.sessions().isEmpty(); i++) {
            Thread.sleep(10); // the server's close listener may trail the FIN the client saw
        }
        assertEquals(0, s.sessions().size(), "sessions left open");
    }

    @Test
    void garbageIsClosedWithoutReply() throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.getOutputStream().write("GET / HTTP/1.1\r\nHost: iwarp\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertEquals(0, readUntilClosed(s).length, "no MPA Reply to a non-MPA key");
        }
        normalPingStillWorks();
        assertEquals(1, server.accepted());
    }

    @Test
    void silenceAfterConnectHitsTheStartupTimeout() throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            assertEquals(0, readUntilClosed(s).length);
        }
        normalPingStillWorks();
    }

    @Test
    void clientVanishingMidTransferLeavesNoSession() throws Exception {
        ProtectionDomain pd = clientStack.allocPd();
        ByteBuf mem = PooledByteBufAllocator.DEFAULT.directBuffer(65535, 65535);
        ByteBuf adMem = PooledByteBufAllocator.DEFAULT.directBuffer(16, 16);
        try {
            mem.setZero(0, 65535);
            MemoryRegion start = pd.register(mem, Access.REMOTE_READ);
            MemoryRegion ad = pd.register(adMem);
            Advertisement.of(start.all()).encode(adMem, 0);
            QueuePair qp = clientStack.connect(server.localAddress(),
                    ConnectOptions.of(pd).mpa(RpingClient.rpingSettings(false))).get(10, TimeUnit.SECONDS);
            qp.postSend(SendRequest.send(1, ad.all())); // the server starts a 65535-octet RDMA Read...
            qp.channel().close().sync();                // ...and the client is gone
            awaitNoSessions();
        } finally {
            mem.release();
            adMem.release();
        }
        normalPingStillWorks();
        assertEquals(2, server.accepted());
    }

    @Test
    void idleSessionsAreClosed() throws Exception {
        ServerConfig config = ServerConfig.defaults().withAddress("127.0.0.1", 0).withLimits(2, 2000, 1);
        try (RpingServer idleServer = RpingServer.start(config, ServeOptions.on(IwarpStack.builder().threads(1).build()));
             RpingClient client = RpingClient.connect(clientStack, idleServer.localAddress(),
                     RpingClient.rpingSettings(false), 64, 10_000)) {
            assertArrayEquals(RpingClient.pingData(0, 'A', 64), client.ping(0));
            client.connection().channel().closeFuture().await(20, TimeUnit.SECONDS); // closed by the server
            assertTrue(!client.connection().channel().isActive(), "idle connection still open");
            awaitNoSessions(idleServer);
            assertThrows(IOException.class, () -> client.ping(1));
        }
        normalPingStillWorks();
    }

    @Test
    void connectionsBeyondTheLimitAreRejected() throws Exception {
        try (RpingClient a = RpingClient.connect(clientStack, server.localAddress(), RpingClient.rpingSettings(false), 64, 10_000);
             RpingClient b = RpingClient.connect(clientStack, server.localAddress(), RpingClient.rpingSettings(false), 64, 10_000)) {
            IOException e = assertThrows(IOException.class, () -> RpingClient.connect(clientStack,
                    server.localAddress(), RpingClient.rpingSettings(false), 64, 10_000));
            assertTrue(e.getMessage().contains("cannot connect"), e.getMessage());
            assertEquals(1, server.refused());
            assertArrayEquals(RpingClient.pingData(0, 'A', 64), a.ping(0));
            assertArrayEquals(RpingClient.pingData(0, 'A', 64), b.ping(0));
        }
        awaitNoSessions();
        normalPingStillWorks();
    }
}
