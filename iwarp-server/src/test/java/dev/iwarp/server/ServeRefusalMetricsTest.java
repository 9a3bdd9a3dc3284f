package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.tls.TlsCertificates;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.verbs.Access;
import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code iwarp_connections_refused_total{cause=...}} for every limit, and {@code iwarp_connections_startup}: each
 * scraped over HTTP at 0 before the peer hits the limit and at 1 after; the other causes stay at 0.
 */
class ServeRefusalMetricsTest {
    private static final String[] CAUSES = {"max-connections", "max-startups", "max-per-source",
            "max-startups-per-source", "tls-handshake-rate", "first-octet-timeout", "startup-timeout",
            "message-deadline", "idle-timeout", "drain-timeout", "memory-budget"};
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    /** No limit but {@code limits}, no target region unless asked, startup timeout 60 s, idle {@code idleSec}. */
    private MetricsFixture serve(ServerLimits limits, int maxConnections, long startupMs, long idleSec)
            throws Exception {
        return serve(ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(0)
                .withLimits(maxConnections, startupMs, idleSec).withLimits(limits), IwarpStack.builder().threads(1),
                null);
    }

    private MetricsFixture serve(ServerConfig config, IwarpStack.Builder stack, TlsSettings tls) throws Exception {
        MetricsFixture f = new MetricsFixture(config, stack, tls);
        closeables.add(f);
        for (String cause : CAUSES) {
            assertEquals(0, f.refused(cause), cause + " before any peer");
        }
        return f;
    }

    private Socket connect(MetricsFixture f) throws IOException {
        Socket s = new Socket(InetAddress.getByName("127.0.0.1"), f.server.port());
        closeables.add(s);
        return s;
    }

    /** The one cause counted once, every other at 0. */
    private static void onlyCause(MetricsFixture f, String cause) throws Exception {
        f.await("iwarp_connections_refused_total", "cause=\"" + cause + "\"", v -> v >= 1);
        for (String c : CAUSES) {
            assertEquals(c.equals(cause) ? 1 : 0, f.refused(c), c);
        }
    }

    @Test
    void maxStartupsAndTheStartupGauge() throws Exception {
        MetricsFixture f = serve(new ServerLimits(1, 0, 0, 0), 1024, 60_000, 0);
        assertEquals(0, f.value("iwarp_connections_startup", ""));
        Socket silent = connect(f);
        f.await("iwarp_connections_startup", "", v -> v == 1);
        assertTrue(ServeGuardTest.closedWithin(connect(f), 5_000), "a second connection in startup is closed");
        onlyCause(f, "max-startups");
        silent.close();
        f.await("iwarp_connections_startup", "", v -> v == 0);
    }

    @Test
    void maxPerSource() throws Exception {
        MetricsFixture f = serve(new ServerLimits(0, 1, 0, 0), 1024, 60_000, 0);
        connect(f);
        assertTrue(ServeGuardTest.closedWithin(connect(f), 5_000));
        onlyCause(f, "max-per-source");
    }

    @Test
    void maxStartupsPerSource() throws Exception {
        MetricsFixture f = serve(new ServerLimits(0, 0, 0, 0, 24, 64, 1, 0, 0, false, 0), 1024, 60_000, 0);
        connect(f);
        assertTrue(ServeGuardTest.closedWithin(connect(f), 5_000));
        onlyCause(f, "max-startups-per-source");
    }

    @Test
    void tlsHandshakeRate() throws Exception {
        TlsCertificates.CertifiedKey self = TlsCertificates.selfSigned("iwarp-server", Duration.ofDays(1));
        MetricsFixture f = serve(ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(0)
                        .withLimits(new ServerLimits(0, 0, 0, 0, 24, 64, 0, 0, 0, false, 1)),
                IwarpStack.builder().threads(1), TlsSettings.builder().identity(self).build());
        connect(f);
        assertTrue(ServeGuardTest.closedWithin(connect(f), 5_000), "a second handshake within the second");
        onlyCause(f, "tls-handshake-rate");
    }

    @Test
    void firstOctetTimeout() throws Exception {
        MetricsFixture f = serve(new ServerLimits(0, 0, 0, 0, 24, 64, 0, 200, 0, false, 0), 1024, 60_000, 0);
        assertTrue(ServeGuardTest.closedWithin(connect(f), 5_000));
        onlyCause(f, "first-octet-timeout");
    }

    @Test
    void startupTimeout() throws Exception {
        MetricsFixture f = serve(ServerLimits.none(), 1024, 300, 0);
        Socket s = connect(f);
        OutputStream out = s.getOutputStream();
        out.write("MPA ID".getBytes(java.nio.charset.StandardCharsets.US_ASCII)); // a Request begun, never ended
        out.flush();
        assertTrue(ServeGuardTest.closedWithin(s, 5_000), "MPA's startup timer closes it");
        onlyCause(f, "startup-timeout");
    }

    @Test
    void messageDeadline() throws Exception {
        MetricsFixture f = serve(new ServerLimits(0, 0, 300, 0), 1024, 60_000, 0);
        Socket c = ServeGuardTest.startMpa(connect(f));
        c.getOutputStream().write(new byte[] {0, (byte) 200}); // an FPDU of 200 octets announced, then nothing
        c.getOutputStream().flush();
        assertTrue(ServeGuardTest.closedWithin(c, 5_000));
        onlyCause(f, "message-deadline");
    }

    @Test
    void idleTimeout() throws Exception {
        MetricsFixture f = serve(ServerLimits.none(), 1024, 60_000, 1);
        assertTrue(ServeGuardTest.closedWithin(ServeGuardTest.startMpa(connect(f)), 5_000));
        onlyCause(f, "idle-timeout");
    }

    @Test
    void maxConnections() throws Exception {
        MetricsFixture f = serve(ServerLimits.none(), 1, 60_000, 0);
        IwarpStack client = IwarpStack.builder().threads(1).build();
        closeables.add(client);
        closeables.add(RpingClient.connect(client, f.server.localAddress(), RpingClient.rpingSettings(false), 64,
                10_000));
        assertThrows(Exception.class, () -> RpingClient.connect(client, f.server.localAddress(),
                RpingClient.rpingSettings(false), 64, 10_000), "an MPA Reply with R=1");
        onlyCause(f, "max-connections");
    }

    @Test
    void memoryBudget() throws Exception {
        // room for the session's two buffers, not for its 1 MiB target region
        MetricsFixture f = serve(ServerConfig.defaults().withAddress("127.0.0.1", 0), IwarpStack.builder().threads(1)
                .memoryBudget(ServerMemory.budget(512 << 10)), null);
        IwarpStack client = IwarpStack.builder().threads(1).build();
        closeables.add(client);
        ByteBuf src = PooledByteBufAllocator.DEFAULT.directBuffer(16, 16).writeZero(16);
        closeables.add(src::release);
        ProtectionDomain pd = client.allocPd();
        MemoryRegion mr = pd.register(src, Access.LOCAL_WRITE);
        QueuePair qp = client.connect(f.server.localAddress(), ConnectOptions.of(pd)
                .mpa(RpingClient.rpingSettings(false))).get(10, TimeUnit.SECONDS);
        Advertisement target = Advertisement.decode(qp.connectionParameters().peerPrivateData());
        qp.postSend(SendRequest.rdmaWrite(1, mr.slice(0, 16), target.stag(), target.to()));
        assertTrue(qp.channel().closeFuture().await(10, TimeUnit.SECONDS), "the Write's target is beyond the budget");
        onlyCause(f, "memory-budget");
    }
}
