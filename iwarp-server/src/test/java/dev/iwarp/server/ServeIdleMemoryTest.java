package dev.iwarp.server;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.WireRegion;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.internal.VerbsAccess;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Scale: an idle {@code serve} session holds no buffer memory. Its target region gets memory at the first Write
 * or Read and keeps it until the connection closes; its session buffers only for one exchange.
 */
class ServeIdleMemoryTest {
    static final int TARGET = 4096;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<ByteBuf> buffers = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        buffers.forEach(ByteBuf::release);
    }

    private ByteBuf buffer(int size) {
        ByteBuf b = Unpooled.directBuffer(size, size).writeZero(size);
        buffers.add(b);
        return b;
    }

    private static Completion take(ConnectOptions opts, boolean receive) throws InterruptedException {
        Completion c = (receive ? opts.recvCq() : opts.sendCq()).take(10, TimeUnit.SECONDS);
        assertNotNull(c, "completion timed out");
        assertTrue(c.isSuccess(), c::toString);
        return c;
    }

    @Test
    void idleSessionHoldsNoBuffersAndTheTargetIsAllocatedAtFirstUseAndReleasedAtClose() throws Exception {
        RpingServer s = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(TARGET),
                ServeOptions.on(IwarpStack.builder().threads(1).build()));
        closeables.add(s);
        IwarpStack stack = IwarpStack.builder().threads(1).build();
        closeables.add(stack);
        ProtectionDomain pd = stack.allocPd();
        ConnectOptions opts = ConnectOptions.of(pd);
        QueuePair qp = stack.connect(s.localAddress(), opts).get(10, TimeUnit.SECONDS);
        Advertisement target = Advertisement.decode(qp.connectionParameters().peerPrivateData());
        assertEquals(TARGET, target.size());
        RpingSession session = s.lastSession();
        WireRegion own = s.targetOf(session);
        assertFalse(own.isAllocated(), "target: no memory until the client uses it");
        assertFalse(session.holdsBuffers(), "session buffers: no memory while idle");
        assertFalse(session.rdmaBufferRegistered(), "RDMA buffer: not registered before the first advertisement");
        assertEquals(2, VerbsAccess.get().taggedBufferTable(s.stack().device()).size(), "registered while idle: the target and the receive buffer");

        // a Write of the last octet, then a Read of the whole target (RDMAP orders the Read after the Write)
        ByteBuf one = buffer(1).setByte(0, 0x7E);
        qp.postSend(SendRequest.rdmaWrite(1, pd.register(one).all(), target.stag(), target.to() + TARGET - 1));
        take(opts, false);
        ByteBuf sink = buffer(TARGET);
        MemoryRegion sinkMr = pd.register(sink, Access.LOCAL_WRITE);
        qp.postSend(SendRequest.rdmaRead(2, sinkMr.all(), target.stag(), target.to()));
        take(opts, false);
        byte[] expected = new byte[TARGET];
        expected[TARGET - 1] = 0x7E;
        assertArrayEquals(expected, ByteBufUtil.getBytes(sink), "zeros, then the octet written");
        assertTrue(own.isAllocated(), "target allocated once used");

        // an echoed Send: the receive buffer holds memory only until the echo is on the wire
        ByteBuf msg = buffer(100).setByte(99, 0x33);
        ByteBuf back = buffer(100);
        qp.postRecv(RecvRequest.of(3, pd.register(back, Access.LOCAL_WRITE).all()));
        qp.postSend(SendRequest.send(4, pd.register(msg).all()));
        take(opts, false);
        assertEquals(100, take(opts, true).byteLength());
        assertEquals(0x33, back.getByte(99));
        assertTrue(session.awaitCounts(0, 0, 1, 10_000), session::toString);
        assertFalse(session.holdsBuffers(), "receive buffer given back after the echo");

        qp.channel().close().sync();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!s.sessions().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(s.sessions().isEmpty(), "session closed");
        assertFalse(own.isAllocated(), "target memory released at close");
    }
}
