package dev.iwarp.bootstrap;

import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.testkit.TestResources;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Send with Invalidate attack (a peer invalidating an STag it was never given, RFC 5040 §8) over real TCP between two {@link IwarpStack}s: a client
 * names an STag it was given (a shared target) or one of another session, and must get RFC 5040's
 * Terminate "STag cannot be invalidated" while the region stays valid for everyone else.
 */
class InvalidationAttackTest {
    private static final TerminateCause CANNOT_INVALIDATE = new TerminateCause(0, 2, 0x09);

    @RegisterExtension
    final TestResources resources = new TestResources();

    private ByteBuf buffer(int size, int fill) {
        return resources.buffer(size, 0, fill);
    }

    private IwarpStack stack() {
        return resources.closeAfter(IwarpStack.builder().transport(Transport.NIO).threads(1).build());
    }

    private static Completion take(CompletionQueue cq) throws InterruptedException {
        Completion c = cq.take(20, TimeUnit.SECONDS);
        assertNotNull(c, "completion timed out");
        return c;
    }

    private static TerminateMessage awaitTerminate(QueuePair qp) throws InterruptedException {
        for (int i = 0; i < 2000 && qp.peerTerminate() == null; i++) {
            Thread.sleep(5);
        }
        assertNotNull(qp.peerTerminate(), "the server sent a Terminate");
        return qp.peerTerminate();
    }

    /** Writes 16 octets of {@code fill} to {@code stag} and reads them back over {@code qp}. */
    private void writeAndReadBack(IwarpStack client, ProtectionDomain cpd, QueuePair qp, CompletionQueue scq,
                                  int stag, long to, int fill) throws Exception {
        MemoryRegion src = cpd.register(buffer(16, fill), Access.LOCAL_WRITE);
        MemoryRegion sink = cpd.register(buffer(16, 0), Access.LOCAL_WRITE);
        qp.postSend(SendRequest.rdmaWrite(1, src.all(), stag, to));
        qp.postSend(SendRequest.rdmaRead(2, sink.all(), stag, to));
        assertTrue(take(scq).isSuccess());
        Completion read = take(scq);
        assertTrue(read.isSuccess(), read::toString);
        assertEquals(fill, sink.memory().getByte(15));
    }

    @Test
    void sharedTargetCannotBeInvalidatedByAClient() throws Exception {
        IwarpStack server = stack();
        ProtectionDomain spd = server.allocPd();
        // a target every client is told about, registered the ordinary way (no REMOTE_INVALIDATE)
        MemoryRegion target = spd.register(buffer(64, 0), Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0), MpaSettings.defaults(), req -> {
            QueuePair qp = req.accept(spd, new CompletionQueue(), new CompletionQueue(), new byte[0]);
            qp.postRecv(RecvRequest.of(1, spd.register(buffer(64, 0), Access.LOCAL_WRITE).all()));
        });
        IwarpStack client = stack();
        ProtectionDomain cpd = client.allocPd();
        ConnectOptions attackerOpts = ConnectOptions.of(cpd);
        QueuePair attacker = client.connect(listener.localAddress(), attackerOpts).get(10, TimeUnit.SECONDS);
        attacker.postSend(SendRequest.sendWithInvalidate(9, cpd.register(buffer(8, 1), Access.LOCAL_WRITE).all(),
                target.stag()));
        assertEquals(CANNOT_INVALIDATE, awaitTerminate(attacker).cause());
        assertTrue(target.isValid(), "the shared target stays valid");

        ConnectOptions opts = ConnectOptions.of(cpd);
        QueuePair honest = client.connect(listener.localAddress(), opts).get(10, TimeUnit.SECONDS);
        writeAndReadBack(client, cpd, honest, opts.sendCq(), target.stag(), target.iova(), 0x42);
        listener.close().sync();
    }

    @Test
    void anotherSessionsRegionCannotBeInvalidatedEvenIfOptedIn() throws Exception {
        IwarpStack server = stack();
        Map<Integer, MemoryRegion> regions = new ConcurrentHashMap<>();
        // one PD per connection; each connection's region may be invalidated by its own peer
        Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0), MpaSettings.defaults(), req -> {
            ProtectionDomain pd = server.allocPd();
            MemoryRegion own = pd.register(buffer(64, 0), Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
                    Access.REMOTE_INVALIDATE);
            regions.put(regions.size(), own);
            QueuePair qp = req.accept(pd, new CompletionQueue(), new CompletionQueue(), new byte[0]);
            qp.postRecv(RecvRequest.of(1, pd.register(buffer(64, 0), Access.LOCAL_WRITE).all()));
        });
        IwarpStack client = stack();
        ProtectionDomain cpd = client.allocPd();
        ConnectOptions victimOpts = ConnectOptions.of(cpd);
        QueuePair victim = client.connect(listener.localAddress(), victimOpts).get(10, TimeUnit.SECONDS);
        QueuePair attacker = client.connect(listener.localAddress(), ConnectOptions.of(cpd)).get(10, TimeUnit.SECONDS);
        MemoryRegion victims = regions.get(0);
        attacker.postSend(SendRequest.sendWithInvalidate(9, cpd.register(buffer(8, 1), Access.LOCAL_WRITE).all(),
                victims.stag()));
        assertEquals(CANNOT_INVALIDATE, awaitTerminate(attacker).cause(),
                "the same answer as for an unknown STag: nothing tells the attacker the STag is live");
        assertTrue(victims.isValid(), "the victim's region stays valid");
        writeAndReadBack(client, cpd, victim, victimOpts.sendCq(), victims.stag(), victims.iova(), 0x24);
        listener.close().sync();
    }
}
