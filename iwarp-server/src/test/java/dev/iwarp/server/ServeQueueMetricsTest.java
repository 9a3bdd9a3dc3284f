package dev.iwarp.server;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Queue-depth gauges and event-loop busy time over HTTP. A client asks serve for 16 large RDMA Reads and an rping
 * Read of its own, then stops reading its socket: serve's IRD slots stay taken, its own Read stays outstanding
 * (ORD), its channel fills to the high-water mark and its engine holds the rest back, until the drain timeout
 * closes the connection and every gauge returns to 0.
 */
class ServeQueueMetricsTest {
    private static final int READ = 8 << 20;
    private static final int READS = 16;
    private static final String[] GAUGES = {"iwarp_queue_send_requests", "iwarp_queue_ird_used",
            "iwarp_queue_ord_used"};

    @Test
    void depthsRiseWhileAPeerStopsReadingAndFallWhenTheDrainTimeoutClosesIt() throws Exception {
        ServerConfig config = ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(READ)
                .withLimits(1024, 60_000, 0)
                .withLimits(new ServerLimits(0, 0, 0, 0, 24, 64, 0, 0, 3, false, 0)); // drain timeout 3 s
        IwarpStack client = IwarpStack.builder().threads(1).build();
        ByteBuf sink = PooledByteBufAllocator.DEFAULT.directBuffer(READ, READ);
        ByteBuf advert = PooledByteBufAllocator.DEFAULT.directBuffer(Advertisement.LENGTH, Advertisement.LENGTH);
        try (MetricsFixture f = new MetricsFixture(config)) {
            for (String g : GAUGES) {
                assertEquals(0, f.value(g, ""), g);
            }
            assertEquals(0, f.value("iwarp_queue_outbound_bytes", "stage=\"engine\""));
            assertEquals(0, f.value("iwarp_queue_outbound_bytes", "stage=\"channel\""));
            double busyBefore = f.value("iwarp_eventloop_busy_seconds_total", "loop=\"0\"");

            ProtectionDomain pd = client.allocPd();
            MemoryRegion mr = pd.register(sink.writerIndex(READ), Access.LOCAL_WRITE, Access.REMOTE_READ);
            MemoryRegion ad = pd.register(advert, Access.LOCAL_WRITE);
            QueuePair qp = client.connect(f.server.localAddress(), ConnectOptions.of(pd)
                    .mpa(MpaSettings.builder().revision(2).ird(READS).ord(READS).build())).get(10, TimeUnit.SECONDS);
            Advertisement target = Advertisement.decode(qp.connectionParameters().peerPrivateData());
            // from here on the client reads nothing: serve's Read of it stays outstanding, its responses stay queued
            qp.channel().eventLoop().submit(() -> qp.channel().config().setAutoRead(false)).sync();
            new Advertisement(mr.slice(0, 100).to(), mr.stag(), 100).encode(advert, 0);
            advert.writerIndex(Advertisement.LENGTH);
            qp.postSend(SendRequest.send(1, ad.slice(0, Advertisement.LENGTH)));
            for (int i = 0; i < READS; i++) {
                qp.postSend(SendRequest.rdmaRead(2 + i, mr.slice(0, READ), target.stag(), target.to()));
            }

            assertEquals(1, f.await("iwarp_queue_ord_used", "", v -> v == 1), "serve's rping Read of the client");
            f.await("iwarp_queue_ird_used", "", v -> v == READS);
            f.await("iwarp_queue_send_requests", "", v -> v >= 1);
            // the channel holds what the socket did not take, about its write-buffer high-water mark; the engine
            // holds the rest of the 128 MiB of responses (the sockets' buffers took a few MiB)
            double channel = f.await("iwarp_queue_outbound_bytes", "stage=\"channel\"", v -> v > 0);
            double engine = f.await("iwarp_queue_outbound_bytes", "stage=\"engine\"", v -> v > 0);
            assertTrue(channel <= 2 * IwarpStack.DEFAULT_WRITE_BUFFER_WATER_MARK.high(), "channel " + channel);
            assertTrue(engine >= READ * READS / 2 && engine < (double) READ * READS, "engine " + engine);
            assertTrue(f.value("iwarp_eventloop_busy_seconds_total", "loop=\"0\"") > busyBefore,
                    "the loop that placed 16 Read Requests and wrote their responses was busy");

            // serve closes it (the client, reading nothing, does not see the close)
            assertEquals(1, f.await("iwarp_connections_refused_total", "cause=\"drain-timeout\"", v -> v >= 1));
            assertEquals(0, f.value("iwarp_connections_open", ""));
            qp.channel().close().sync();
            for (String g : GAUGES) {
                f.await(g, "", v -> v == 0);
            }
            f.await("iwarp_queue_outbound_bytes", "stage=\"engine\"", v -> v == 0);
            f.await("iwarp_queue_outbound_bytes", "stage=\"channel\"", v -> v == 0);

            // with no connection the loop waits in select: a second of it adds (almost) nothing
            double idleFrom = f.value("iwarp_eventloop_busy_seconds_total", "loop=\"0\"");
            Thread.sleep(1000);
            double idle = f.value("iwarp_eventloop_busy_seconds_total", "loop=\"0\"") - idleFrom;
            assertTrue(idle >= 0 && idle < 0.25, "busy " + idle + " s of an idle second");
        } finally {
            client.close();
            sink.release();
            advert.release();
        }
    }
}
