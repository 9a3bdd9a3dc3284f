package dev.iwarp.server;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryBudget;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer asks for IRD x 1 MiB of Read Responses and stops reading, so that responses and their FPDUs stay queued
 * towards it; then the server's stack shuts down. Every queued buffer is released (the leak detector runs at paranoid
 * for every test and fails it on a report), and with CRC on the copies queued were charged to the peer's budget
 * account and are all given back.
 */
class ServeShutdownWithQueuedResponsesTest {
    private static final int MIB = 1 << 20;

    @ParameterizedTest(name = "CRC {0}")
    @ValueSource(booleans = {true, false})
    void queuedResponsesAreReleasedAtShutdown(boolean crc) throws Exception {
        MemoryBudget budget = ServerMemory.budget(64L * MIB);
        RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).memoryBudget(budget).build()));
        IwarpStack client = IwarpStack.builder().threads(1).build();
        ByteBuf sink = PooledByteBufAllocator.DEFAULT.directBuffer(MIB, MIB).writeZero(MIB);
        boolean serverClosed = false;
        try {
            ProtectionDomain pd = client.allocPd();
            MemoryRegion mr = pd.register(sink, Access.LOCAL_WRITE);
            QueuePair qp = client.connect(server.localAddress(), ConnectOptions.of(pd)
                    .mpa(MpaSettings.builder().revision(2).crc(crc).ird(16).ord(16).build())).get(10, TimeUnit.SECONDS);
            Advertisement target = Advertisement.decode(qp.connectionParameters().peerPrivateData());
            qp.channel().config().setAutoRead(false); // the peer stops reading
            int size = Math.min(MIB, target.size());
            for (int r = 0; r < 16; r++) {
                qp.postSend(SendRequest.rdmaRead(r, mr.slice(0, size), target.stag(), target.to()));
            }
            // the target's memory, and with CRC the copies queued towards the peer
            long expected = crc ? size + 64 * 1024 : size;
            for (int i = 0; i < 1000 && budget.committed() < expected; i++) {
                Thread.sleep(10);
            }
            assertTrue(budget.committed() >= expected, budget::toString);
            Thread.sleep(200); // the server's transmitter has stopped at the high-water mark
            server.close(); // the stack shuts down with responses and FPDUs queued
            serverClosed = true;
            assertEquals(0, budget.committed(), "every copy and region given back at shutdown");
        } finally {
            client.close();
            if (!serverClosed) {
                server.close();
            }
            sink.release();
        }
    }
}
