package dev.iwarp.server;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.rdmap.TerminateCause;
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

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer whose MPA Request says IRD 0 (so the session's ORD is 0: its RDMA Reads can never start) and that streams
 * rping advertisements without waiting for the go-ahead: the session keeps one advertisement in flight, as rping
 * does, so the second one finds no receive posted and the connection ends with the Terminate the spec names for
 * it (DDP untagged, no buffer: RFC 5041 §7.2), instead of the server queueing an RDMA Read for each one.
 */
class AdvertisementFloodTest {
    private RpingServer server;
    private IwarpStack clientStack;

    @BeforeEach
    void start() throws Exception {
        server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()));
        clientStack = IwarpStack.builder().threads(1).build();
    }

    @AfterEach
    void stop() {
        clientStack.close();
        server.close();
    }

    /** A client whose MPA Request says IRD 0, its 16-octet advertisement of a 4 KiB region ready to send. */
    private final class IrdZeroClient implements AutoCloseable {
        final ByteBuf mem = PooledByteBufAllocator.DEFAULT.directBuffer(4096, 4096);
        final ByteBuf adMem = PooledByteBufAllocator.DEFAULT.directBuffer(16, 16);
        final MemoryRegion ad;
        final QueuePair qp;

        IrdZeroClient() throws Exception {
            ProtectionDomain pd = clientStack.allocPd();
            mem.setZero(0, 4096);
            MemoryRegion start = pd.register(mem, Access.REMOTE_READ, Access.REMOTE_WRITE);
            ad = pd.register(adMem);
            Advertisement.of(start.all()).encode(adMem, 0);
            MpaSettings irdZero = MpaSettings.builder().revision(2).ird(0).ord(1).build();
            qp = clientStack.connect(server.localAddress(), ConnectOptions.of(pd).mpa(irdZero)).get(10, TimeUnit.SECONDS);
            assertEquals(0, qp.connectionParameters().ird());
        }

        void advertise(long wrId) {
            qp.postSend(SendRequest.send(wrId, ad.all()).unsignaled());
        }

        @Override
        public void close() {
            qp.channel().close().syncUninterruptibly();
            mem.release();
            adMem.release();
        }
    }

    private void normalPingStillWorks() throws Exception {
        try (RpingClient client = RpingClient.connect(clientStack, server.localAddress(),
                RpingClient.rpingSettings(false), 64, 10_000)) {
            for (int n = 0; n < 3; n++) {
                assertArrayEquals(RpingClient.pingData(n, 'A' + n, 64), client.ping(n), "a normal rping still works");
            }
        }
    }

    @Test
    void aSecondAdvertisementBeforeTheGoAheadGetsTheNoBufferTerminate() throws Exception {
        try (IrdZeroClient c = new IrdZeroClient()) {
            c.advertise(1); // its RDMA Read can never start (ORD 0): no go-ahead will come
            c.advertise(2);
            assertTrue(c.qp.channel().closeFuture().await(10, TimeUnit.SECONDS),
                    "the server ended the connection of a peer that advertised again without a go-ahead");
            assertNotNull(c.qp.peerTerminate(), "with a Terminate");
            TerminateCause cause = c.qp.peerTerminate().interpreted().cause();
            assertEquals(new TerminateCause(1, 2, 0x02), cause, "DDP untagged buffer error, invalid MSN: no buffer");
        }
        normalPingStillWorks();
    }

    @Test
    void streamedAdvertisementsEndTheConnectionAtOnce() throws Exception {
        try (IrdZeroClient c = new IrdZeroClient()) {
            for (int i = 0; i < 1000 && c.qp.channel().isActive(); i++) {
                c.advertise(i);
            }
            // the Terminate itself may be lost to a reset while the client still sends (it is asserted above)
            assertTrue(c.qp.channel().closeFuture().await(10, TimeUnit.SECONDS),
                    "the server ended the connection instead of queueing an RDMA Read per advertisement");
        }
        for (int i = 0; i < 1000 && !server.sessions().isEmpty(); i++) {
            Thread.sleep(10);
        }
        assertTrue(server.sessions().isEmpty(), "no session left");
        normalPingStillWorks();
    }
}
