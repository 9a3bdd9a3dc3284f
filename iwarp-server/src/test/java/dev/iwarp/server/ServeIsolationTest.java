package dev.iwarp.server;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.server.wire.BlockingCompletions;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.VitcpWire;
import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve} isolates its clients: each connection has its own protection domain and target region,
 * so one client's RDMA Write or Read naming another client's advertised region is refused exactly like an unknown
 * STag, and nothing of the other's changes; only {@code --shared-target} puts everyone on one region.
 */
class ServeIsolationTest {
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<ByteBuf> buffers = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        buffers.forEach(ByteBuf::release);
    }

    private RpingServer server(boolean shared) throws Exception {
        RpingServer s = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(4096)
                .withSharedTarget(shared), ServeOptions.on(IwarpStack.builder().threads(1).build()));
        closeables.add(s);
        return s;
    }

    private ByteBuf buffer(int size, int fill) {
        ByteBuf b = Unpooled.directBuffer(size, size);
        byte[] a = new byte[size];
        Arrays.fill(a, (byte) fill);
        b.writeBytes(a);
        buffers.add(b);
        return b;
    }

    /** A client connection and the target the server advertised to it. */
    private record Client(QueuePair qp, ConnectOptions opts, ProtectionDomain pd, Advertisement target) {
    }

    private Client connect(RpingServer s) throws Exception {
        IwarpStack stack = IwarpStack.builder().threads(1).build();
        closeables.add(stack);
        ProtectionDomain pd = stack.allocPd();
        ConnectOptions opts = ConnectOptions.of(pd);
        QueuePair qp = stack.connect(s.localAddress(), opts).get(10, TimeUnit.SECONDS);
        return new Client(qp, opts, pd, Advertisement.decode(qp.connectionParameters().peerPrivateData()));
    }

    private static Completion take(Client c) throws InterruptedException {
        Completion done = c.opts().sendCq().take(10, TimeUnit.SECONDS);
        assertNotNull(done, "completion timed out");
        return done;
    }

    private void write(Client from, Advertisement to, int fill) throws Exception {
        MemoryRegion src = from.pd().register(buffer(64, fill), Access.LOCAL_WRITE);
        from.qp().postSend(SendRequest.rdmaWrite(1, src.all(), to.stag(), to.to()));
    }

    private static byte[] octets(WireRegion r, int n) {
        byte[] b = new byte[n];
        r.memory().getBytes(0, b);
        return b;
    }

    @Test
    void eachConnectionHasItsOwnTargetAndCannotReachAnothers() throws Exception {
        RpingServer s = server(false);
        assertNull(s.target(), "no shared target by default");
        Client a = connect(s);
        RpingSession sessionA = s.lastSession();
        Client b = connect(s);
        RpingSession sessionB = s.lastSession();
        assertNotEquals(a.target().stag(), b.target().stag());
        WireRegion targetB = s.targetOf(sessionB);
        assertEquals(targetB.remoteHandle(), b.target().stag());
        byte[] zero = new byte[64];
        assertTrue(Arrays.equals(zero, octets(targetB, 64)), "a new target region is zeroed");

        write(b, b.target(), 0x0B); // B's own data, then a Read of it to know it landed
        MemoryRegion sink = b.pd().register(buffer(64, 0), Access.LOCAL_WRITE);
        b.qp().postSend(SendRequest.rdmaRead(2, sink.all(), b.target().stag(), b.target().to()));
        assertTrue(take(b).isSuccess());
        assertTrue(take(b).isSuccess());

        write(a, b.target(), 0x0A); // A names B's target, as advertised to B
        for (int i = 0; i < 2000 && a.qp().peerTerminate() == null; i++) { // 10 s: a bound, not a timing check
            Thread.sleep(5);
        }
        assertNotNull(a.qp().peerTerminate(), "A's Write was refused");
        assertEquals(new TerminateCause(1, 1, 0x00), a.qp().peerTerminate().cause(),
                "DDP Invalid STag: the same answer as for an STag that does not exist");
        byte[] expected = new byte[64];
        Arrays.fill(expected, (byte) 0x0B);
        assertTrue(Arrays.equals(expected, octets(targetB, 64)), "B's target untouched");
        assertTrue(b.qp().channel().isOpen(), "B is still served");
        assertNotNull(sessionA);
    }

    @Test
    void viTcpConnectionsAreIsolatedToo() throws Exception {
        byte[] discriminator = "rping".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        dev.iwarp.vitcp.VitcpConfig.Builder vi = dev.iwarp.vitcp.VitcpConfig.builder()
                .reliabilityLevel(dev.iwarp.vitcp.ViReliabilityLevel.RELIABLE_DELIVERY).mtu(1024);
        RpingServer s = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(4096),
                ServeOptions.on(VitcpWire.server(vi.rdmaReadWindow(16).build(), discriminator, false, 1)));
        closeables.add(s);
        ClientWire client = VitcpWire.client(vi.build(), discriminator);
        closeables.add(client);
        WireDomain domA = client.allocDomain();
        WireDomain domB = client.allocDomain();
        BlockingCompletions doneA = new BlockingCompletions();
        BlockingCompletions doneB = new BlockingCompletions();
        WireConnection a = client.connect(s.localAddress(), domA, false, 1, doneA, c -> { }, 10_000);
        WireConnection b = client.connect(s.localAddress(), domB, false, 1, doneB, c -> { }, 10_000);
        RpingSession sessionB = s.lastSession();
        Advertisement adA = Advertisement.decode(a.peerData());
        Advertisement adB = Advertisement.decode(b.peerData());
        assertNotEquals(adA.stag(), adB.stag(), "each connection its own memory handle");
        WireRegion srcB = domB.register(buffer(64, 0x0B), WireAccess.LOCAL_WRITE);
        b.postRdmaWrite(1, srcB, 0, 64, adB.to(), adB.stag());
        doneB.take(false, 10_000, "B's Write to its own target");
        WireRegion srcA = domA.register(buffer(64, 0x0A), WireAccess.LOCAL_WRITE);
        a.postRdmaWrite(1, srcA, 0, 64, adB.to(), adB.stag()); // A names B's target
        try { // Reliable Delivery completes A's Write once delivered; the server refuses it (memory protection error)
            doneA.take(false, 5_000, "A's Write to B's target");
        } catch (java.io.IOException refused) {
            // or the connection ends in error: either way nothing may land
        }
        Thread.sleep(200);
        byte[] expected = new byte[64];
        Arrays.fill(expected, (byte) 0x0B);
        assertTrue(Arrays.equals(expected, octets(s.targetOf(sessionB), 64)), "B's target untouched");
    }

    @Test
    void sharedTargetIsOneRegionForAll() throws Exception {
        RpingServer s = server(true);
        assertNotNull(s.target());
        Client a = connect(s);
        Client b = connect(s);
        assertEquals(a.target(), b.target());
        write(a, b.target(), 0x0A);
        // A Write's completion says it was sent, not placed; a Read behind it on the same stream is answered only
        // after the Write was placed (RFC 5040 §5.5), so B's Read below cannot overtake A's Write.
        MemoryRegion fence = a.pd().register(buffer(64, 0), Access.LOCAL_WRITE);
        a.qp().postSend(SendRequest.rdmaRead(2, fence.all(), a.target().stag(), a.target().to()));
        assertTrue(take(a).isSuccess());
        assertTrue(take(a).isSuccess());
        assertEquals(0x0A, fence.memory().getByte(63), "A reads back its own Write");
        MemoryRegion sink = b.pd().register(buffer(64, 0), Access.LOCAL_WRITE);
        b.qp().postSend(SendRequest.rdmaRead(2, sink.all(), b.target().stag(), b.target().to()));
        assertTrue(take(b).isSuccess());
        assertEquals(0x0A, sink.memory().getByte(63), "with --shared-target, B reads what A wrote");
    }
}
