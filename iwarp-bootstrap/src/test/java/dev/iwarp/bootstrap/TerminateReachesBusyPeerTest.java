package dev.iwarp.bootstrap;

import dev.iwarp.ift.IftSettings;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * A Terminate must reach a peer that is still sending when the stream fails (RFC 5040 §5.4: the Terminate is
 * the last message, then the stream closes). Closing the socket at once with the peer's octets unread makes
 * the kernel answer with a reset, and the peer may lose the Terminate it had not read yet; the framings
 * therefore close their output after the Terminate and drain the input until the peer's FIN (or a deadline).
 * Here a client streams 8 MiB Writes to an STag the server does not have, round after round.
 *
 * <p>The server's wait for the peer's FIN is lengthened from its 2 s to 60 s here: this test is about the order
 * (Terminate, FIN, drain), and on a machine loaded enough to starve the client's event loop for 2 s the deadline
 * closed the server's socket first, the kernel answered the client's octets with a reset and the Terminate was
 * lost (seen at a load average of 17). The deadline itself is a bound on a peer that never closes.
 */
class TerminateReachesBusyPeerTest {
    private static final int ROUNDS = 12;
    private static final int SIZE = 8 << 20;

    enum Wire { MPA, IFT }

    @ParameterizedTest
    @EnumSource(Wire.class)
    void terminateArrivesWhileThePeerIsStillWriting(Wire wire) throws Exception {
        Framing framing = wire == Wire.MPA ? MpaFraming.of(MpaSettings.defaults())
                : IftFraming.of(IftSettings.builder().build());
        ByteBuf memory = PooledByteBufAllocator.DEFAULT.directBuffer(SIZE, SIZE).writeZero(SIZE);
        LingeringClose.drainMillis = 60_000;
        try (IwarpStack server = IwarpStack.builder().threads(1).build();
             IwarpStack client = IwarpStack.builder().threads(1).build()) {
            ProtectionDomain spd = server.allocPd();
            Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0), framing,
                    req -> req.accept(spd, new CompletionQueue(), new CompletionQueue(), new byte[0]));
            ProtectionDomain cpd = client.allocPd();
            MemoryRegion src = cpd.register(memory, Access.LOCAL_WRITE);
            for (int round = 0; round < ROUNDS; round++) {
                ConnectOptions opts = ConnectOptions.of(cpd).framing(framing);
                QueuePair qp = client.connect(listener.localAddress(), opts).get(10, TimeUnit.SECONDS);
                for (int i = 0; i < 4; i++) {
                    qp.postSend(SendRequest.rdmaWrite(i, src.all(), 0x00dead00, 0));
                }
                for (int i = 0; i < 2000 && qp.peerTerminate() == null && qp.channel().isActive(); i++) {
                    Thread.sleep(5);
                }
                qp.channel().closeFuture().await(10, TimeUnit.SECONDS);
                assertNotNull(qp.peerTerminate(), "round " + round + ": the connection ended without the Terminate");
                assertEquals(new TerminateCause(1, 1, 0x00), qp.peerTerminate().cause());
            }
            listener.close().sync();
        } finally {
            LingeringClose.drainMillis = LingeringClose.DRAIN_MILLIS;
            memory.release();
        }
    }
}
