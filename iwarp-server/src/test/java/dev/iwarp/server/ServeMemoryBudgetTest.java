package dev.iwarp.server;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryBudget;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * serve's memory budget: the defaults follow from the JVM's direct-memory limit, a peer whose Write would commit
 * its target beyond the budget gets a Terminate while the others go on, and a new ping still completes.
 */
class ServeMemoryBudgetTest {
    private static final int MIB = 1 << 20;

    @Test
    void defaultsFollowFromTheDirectMemoryLimit() {
        long budget = ServerMemory.defaultBudget(256L * MIB);
        assertEquals(192L * MIB, budget, "3/4 of -XX:MaxDirectMemorySize=256m");
        // target, receive buffer and its echo twin, RDMA buffer, bench ring, write-buffer high-water mark
        assertEquals(MIB + 3 * 64 * 1024 + MIB + 768 * 1024, ServerMemory.perConnection(MIB, false), "2.9375 MiB");
        assertEquals(1440, ServerMemory.defaultMaxConnections(budget), "(192 - 12) MiB / 128 KiB");
        long atDefaultHeap = ServerMemory.defaultBudget(5_900L * MIB);
        int connections = ServerMemory.defaultMaxConnections(atDefaultHeap);
        assertTrue(connections >= 10_000, connections + ": 10,000 idle connections fit the defaults");
        assertTrue((long) connections * ServerMemory.SESSION_BUFFERS <= atDefaultHeap,
                connections + " connections' session buffers fit the budget");
        assertEquals(64L * 1024, ServerMemory.parseSize("--memory-budget", "64k"));
        assertEquals(4L << 30, ServerMemory.parseSize("--memory-budget", "4G"));
        assertThrows(IllegalArgumentException.class, () -> ServerMemory.parseSize("--memory-budget", "lots"));
        assertThrows(IllegalArgumentException.class, () -> ServerMemory.parseSize("--memory-budget", "0"));
    }

    private static QueuePair writeToTarget(IwarpStack client, RpingServer server, ByteBuf src) throws Exception {
        ProtectionDomain pd = client.allocPd();
        MemoryRegion mr = pd.register(src, Access.LOCAL_WRITE);
        QueuePair qp = client.connect(server.localAddress(), ConnectOptions.of(pd).mpa(RpingClient.rpingSettings(false)))
                .get(10, TimeUnit.SECONDS);
        Advertisement target = Advertisement.decode(qp.connectionParameters().peerPrivateData());
        qp.postSend(SendRequest.rdmaWrite(1, mr.slice(0, 16), target.stag(), target.to()));
        return qp;
    }

    @Test
    void aPeerBeyondTheBudgetIsTerminatedAndPingsGoOn() throws Exception {
        MemoryBudget budget = ServerMemory.budget(5 * MIB / 2); // room for two 1 MiB targets, not three
        RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).memoryBudget(budget).build()));
        IwarpStack client = IwarpStack.builder().threads(1).build();
        ByteBuf src = PooledByteBufAllocator.DEFAULT.directBuffer(16, 16).writeZero(16);
        List<QueuePair> qps = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                qps.add(writeToTarget(client, server, src));
                assertTrue(qps.get(i).sendCq().take(10, TimeUnit.SECONDS).isSuccess());
            }
            for (int i = 0; i < 1000 && budget.committed() < 2L * MIB; i++) {
                Thread.sleep(10); // a Write completes at the client once sent: the server places it a little later
            }
            assertTrue(budget.committed() >= 2L * MIB, budget::toString);
            QueuePair third = writeToTarget(client, server, src);
            assertTrue(third.channel().closeFuture().await(10, TimeUnit.SECONDS), "the third peer is refused");
            assertNotNull(third.peerTerminate());
            assertEquals(new TerminateCause(0, 0, 0xFF), third.peerTerminate().interpreted().cause(),
                    "RDMAP Local Catastrophic Error");
            assertEquals(1, budget.refusals());
            for (QueuePair qp : qps) {
                assertTrue(qp.channel().isActive(), "the peers within the budget go on");
            }
            try (RpingClient ping = RpingClient.connect(client, server.localAddress(), RpingClient.rpingSettings(false),
                    1000, 10_000)) {
                for (int n = 0; n < 3; n++) {
                    assertArrayEquals(RpingClient.pingData(n, 'A' + n, 1000), ping.ping(n), "a new ping completes");
                }
            }
        } finally {
            src.release();
            client.close();
            server.close();
        }
        assertEquals(0, budget.committed(), "everything given back once the connections closed");
    }
}
