package dev.iwarp.bootstrap;

import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * As with libibverbs, a receive posted from an application thread is in effect when
 * {@code postRecv} returns: a Send the peer makes right after it finds the buffer, even though the
 * receiving event loop handles network input before queued tasks.
 */
class PostRecvVisibilityTest {

    @Test
    void aSendRightAfterPostRecvFindsItsBuffer() throws Exception {
        ByteBuf serverMemory = PooledByteBufAllocator.DEFAULT.directBuffer(64, 64).writeZero(64);
        ByteBuf clientMemory = PooledByteBufAllocator.DEFAULT.directBuffer(64, 64).writeZero(64);
        try (IwarpStack server = IwarpStack.builder().threads(1).build();
             IwarpStack client = IwarpStack.builder().threads(1).build()) {
            ProtectionDomain spd = server.allocPd();
            MemoryRegion recv = spd.register(serverMemory, Access.LOCAL_WRITE);
            CompletionQueue serverRecv = new CompletionQueue();
            CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
            Channel listener = server.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                    MpaSettings.defaults(), req -> accepted.complete(
                            req.accept(spd, new CompletionQueue(), serverRecv, new byte[0])));
            ProtectionDomain cpd = client.allocPd();
            MemoryRegion src = cpd.register(clientMemory, Access.LOCAL_WRITE);
            ConnectOptions opts = ConnectOptions.of(cpd);
            QueuePair qp = client.connect(listener.localAddress(), opts).get(10, TimeUnit.SECONDS);
            QueuePair sqp = accepted.get(10, TimeUnit.SECONDS);
            for (int i = 0; i < 300; i++) {
                sqp.postRecv(RecvRequest.of(i, recv.all()));     // from this thread, not the server's loop
                qp.postSend(SendRequest.send(i, src.slice(0, 16))); // at once
                Completion r = serverRecv.take(10, TimeUnit.SECONDS);
                assertNotNull(r, "receive " + i);
                assertTrue(r.isSuccess(), r::toString);
                assertEquals(i, r.wrId());
                assertTrue(opts.sendCq().take(10, TimeUnit.SECONDS).isSuccess());
            }
            qp.close().sync();
            listener.close().sync();
        } finally {
            serverMemory.release();
            clientMemory.release();
        }
    }
}
