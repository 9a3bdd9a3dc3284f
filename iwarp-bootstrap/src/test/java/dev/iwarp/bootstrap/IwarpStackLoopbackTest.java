package dev.iwarp.bootstrap;

import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.mpa.MpaRole;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.rdmap.engine.RdmaEngine;
import dev.iwarp.testkit.TestResources;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaDevice;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcOpcode;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import dev.iwarp.mpa.MpaConnectRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RDMA Write, Read and Send between two {@link IwarpStack}s over real TCP on 127.0.0.1, several
 * connections at once, and the same handlers installed by hand in a plain Netty server.
 */
class IwarpStackLoopbackTest {
    @RegisterExtension
    final TestResources resources = new TestResources();

    private ByteBuf buffer(int size, int seed) {
        return resources.buffer(size, 13, seed);
    }

    private IwarpStack stack(Transport t) {
        return resources.closeAfter(IwarpStack.builder().transport(t).threads(1).build());
    }

    private static Completion take(CompletionQueue cq) throws InterruptedException {
        Completion c = cq.take(20, TimeUnit.SECONDS);
        assertNotNull(c, "completion timed out");
        return c;
    }

    @ParameterizedTest(name = "{0} crc={1} size={2}")
    @CsvSource({"NIO, true, 65536", "NIO, false, 1", "NIO, true, 1048576", "EPOLL, true, 16777216", "EPOLL, false, 0",
            "IO_URING, true, 65536", "IO_URING, false, 1048576"})
    void writeReadSendOverTcp(Transport transport, boolean crc, int size) throws Exception {
        // a native transport this machine lacks (or whose kernel refuses io_uring) is reported as skipped, with why
        org.junit.jupiter.api.Assumptions.assumeTrue(transport.unavailableReason() == null,
                transport::unavailableReason);
        IwarpStack server = stack(transport);
        IwarpStack client = stack(transport);
        ProtectionDomain spd = server.allocPd();
        MemoryRegion target = spd.register(buffer(Math.max(size, 1), 0), Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                Access.REMOTE_READ);
        CompletionQueue sScq = new CompletionQueue();
        CompletionQueue sRcq = new CompletionQueue();
        MemoryRegion sRecv = spd.register(buffer(Math.max(size, 1), 0), Access.LOCAL_WRITE);
        Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0), MpaSettings.builder().crc(false).build(),
                req -> {
                    QueuePair qp = req.accept(spd, sScq, sRcq, new byte[0]);
                    qp.postRecv(RecvRequest.of(1, sRecv.slice(0, size)));
                });
        ProtectionDomain cpd = client.allocPd();
        MemoryRegion src = cpd.register(buffer(Math.max(size, 1), 7), Access.LOCAL_WRITE);
        MemoryRegion sink = cpd.register(buffer(Math.max(size, 1), 0), Access.LOCAL_WRITE);
        ConnectOptions opts = ConnectOptions.of(cpd).mpa(MpaSettings.builder().crc(crc).build());
        QueuePair qp = client.connect(listener.localAddress(), opts).get(10, TimeUnit.SECONDS);
        assertEquals(crc, qp.connectionParameters().framing(MpaParameters.class).crc());

        qp.postSend(SendRequest.rdmaWrite(1, src.slice(0, size), target.stag(), target.iova()));
        qp.postSend(SendRequest.rdmaRead(2, sink.slice(0, size), target.stag(), target.iova()));
        qp.postSend(SendRequest.send(3, src.slice(0, size)));
        for (int wr = 1; wr <= 3; wr++) {
            Completion c = take(opts.sendCq());
            assertTrue(c.isSuccess(), c::toString);
            assertEquals(wr, c.wrId());
        }
        Completion r = take(sRcq);
        assertEquals(WcOpcode.RECV, r.opcode());
        assertEquals(size, r.byteLength());
        byte[] expected = new byte[size];
        src.memory().getBytes(0, expected);
        byte[] got = new byte[size];
        target.memory().getBytes(0, got);
        assertArrayEquals(expected, got, "Write");
        sink.memory().getBytes(0, got);
        assertArrayEquals(expected, got, "Read");
        sRecv.memory().getBytes(0, got);
        assertArrayEquals(expected, got, "Send");
        qp.close().await(5, TimeUnit.SECONDS);
        listener.close().sync();
    }

    @Test
    void severalConnectionsAtOnce() throws Exception {
        IwarpStack server = stack(Transport.NIO);
        ProtectionDomain spd = server.allocPd();
        MemoryRegion target = spd.register(buffer(8 * 4096, 0), Access.REMOTE_WRITE, Access.REMOTE_READ);
        Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0), MpaSettings.defaults(),
                req -> req.accept(spd, new CompletionQueue(), new CompletionQueue(), new byte[0]));
        IwarpStack client = stack(Transport.NIO);
        ProtectionDomain cpd = client.allocPd();
        List<QueuePair> qps = new ArrayList<>();
        List<CompletionQueue> cqs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            ConnectOptions o = ConnectOptions.of(cpd);
            cqs.add(o.sendCq());
            qps.add(client.connect(listener.localAddress(), o).get(10, TimeUnit.SECONDS));
        }
        for (int i = 0; i < 8; i++) {
            MemoryRegion src = cpd.register(buffer(4096, i), Access.LOCAL_WRITE);
            for (int k = 0; k < 50; k++) {
                qps.get(i).postSend(SendRequest.rdmaWrite(k, src.all(), target.stag(), target.iova() + 4096L * i));
            }
        }
        MemoryRegion sink = cpd.register(buffer(8 * 4096, 0), Access.LOCAL_WRITE);
        for (int i = 0; i < 8; i++) {
            // a Write completes when sent; a Read of the same bytes completes after they were placed
            qps.get(i).postSend(SendRequest.rdmaRead(50, sink.slice(4096 * i, 4096), target.stag(),
                    target.iova() + 4096L * i));
        }
        for (int i = 0; i < 8; i++) {
            for (int k = 0; k <= 50; k++) {
                Completion c = take(cqs.get(i));
                assertTrue(c.isSuccess(), c::toString);
                assertEquals(k, c.wrId());
            }
            byte[] expected = new byte[4096];
            for (int k = 0; k < 4096; k++) {
                expected[k] = (byte) (k * 13 + i);
            }
            byte[] got = new byte[4096];
            target.memory().getBytes(4096 * i, got);
            assertArrayEquals(expected, got, "connection " + i);
            sink.memory().getBytes(4096 * i, got);
            assertArrayEquals(expected, got, "read back over connection " + i);
        }
        listener.close().sync();
    }

    @Test
    void handlersInstalledByHandInAPlainNettyServer() throws Exception {
        // A Netty user composes the same handlers in their own ChannelInitializer.
        RdmaDevice device = new RdmaDevice();
        resources.closeAfter(device); // deregisters what is still registered
        ProtectionDomain pd = device.allocPd();
        MemoryRegion recv = pd.register(buffer(64, 0), Access.LOCAL_WRITE);
        CompletionQueue recvCq = new CompletionQueue();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        resources.closeAfter(() -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync());
        Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        IwarpPipeline.addFraming(ch.pipeline(), MpaRole.RESPONDER, MpaSettings.defaults());
                        RdmaEngine engine = new RdmaEngine(pd, new CompletionQueue(), recvCq);
                        engine.queuePair().postRecv(RecvRequest.of(42, recv.all()));
                        ch.pipeline().addLast(IwarpPipeline.RDMAP, engine);
                        ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                if (evt instanceof MpaConnectRequest) {
                                    ((MpaConnectRequest) evt).accept("welcome".getBytes());
                                }
                            }
                        });
                    }
                }).bind("127.0.0.1", 0).sync().channel();
        resources.closeAfter(() -> server.close().sync());
        IwarpStack client = stack(Transport.NIO);
        ProtectionDomain cpd = client.allocPd();
        QueuePair qp = client.connect(server.localAddress(), ConnectOptions.of(cpd)).get(10, TimeUnit.SECONDS);
        assertArrayEquals("welcome".getBytes(), qp.connectionParameters().peerPrivateData());
        MemoryRegion src = cpd.register(buffer(64, 3), Access.LOCAL_WRITE);
        qp.postSend(SendRequest.send(1, src.slice(0, 48)));
        Completion c = take(recvCq);
        assertEquals(42, c.wrId());
        assertEquals(48, c.byteLength());
    }

    @ParameterizedTest(name = "markers initiator={0} responder={1} crc={2}")
    @CsvSource({"true, false, true", "false, true, false", "true, true, true"})
    void everyOperationOverTcpWithMarkers(boolean markersI, boolean markersR, boolean crc) throws Exception {
        IwarpStack server = stack(Transport.NIO);
        IwarpStack client = stack(Transport.NIO);
        ProtectionDomain spd = server.allocPd();
        CompletionQueue sRcq = new CompletionQueue();
        MemoryRegion target = spd.register(buffer(70000, 0), Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                Access.REMOTE_READ, Access.REMOTE_ATOMIC);
        MemoryRegion recv = spd.register(buffer(4 * 70000, 0), Access.LOCAL_WRITE);
        Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0),
                MpaSettings.builder().crc(false).markers(markersR).acceptMarkers(true).build(), req -> {
                    QueuePair qp = req.accept(spd, new CompletionQueue(), sRcq, new byte[0]);
                    for (int i = 0; i < 4; i++) {
                        qp.postRecv(RecvRequest.of(100 + i, recv.slice(i * 70000, 70000)));
                    }
                });
        ProtectionDomain cpd = client.allocPd();
        MemoryRegion src = cpd.register(buffer(70000, 5), Access.LOCAL_WRITE);
        MemoryRegion result = cpd.register(buffer(8, 0), Access.LOCAL_WRITE);
        ConnectOptions opts = ConnectOptions.of(cpd).mpa(MpaSettings.builder().crc(crc).markers(markersI).build());
        QueuePair qp = client.connect(listener.localAddress(), opts).get(10, TimeUnit.SECONDS);
        assertEquals(markersR, qp.connectionParameters().framing(MpaParameters.class).markersTx());
        assertEquals(markersI, qp.connectionParameters().framing(MpaParameters.class).markersRx());
        MemoryRegion invalidated = spd.register(buffer(8, 0), Access.REMOTE_WRITE, Access.REMOTE_INVALIDATE);
        qp.postSend(SendRequest.rdmaWrite(1, src.slice(0, 70000), target.stag(), target.iova()));
        qp.postSend(SendRequest.send(2, src.slice(0, 5000)).solicited());
        qp.postSend(SendRequest.sendWithInvalidate(3, src.slice(0, 70000), invalidated.stag()));
        qp.postSend(SendRequest.immediateData(4, 0xCAFEL));
        qp.postSend(SendRequest.fetchAdd(5, result.all(), target.stag(), target.iova() + 8, 1, 0));
        qp.postSend(SendRequest.rdmaRead(6, src.slice(0, 70000), target.stag(), target.iova()));
        for (int wr = 1; wr <= 6; wr++) {
            Completion c = take(opts.sendCq());
            assertTrue(c.isSuccess(), c::toString);
            assertEquals(wr, c.wrId());
        }
        Completion r1 = take(sRcq);
        assertTrue(r1.solicited());
        assertEquals(5000, r1.byteLength());
        Completion r2 = take(sRcq);
        assertEquals(invalidated.stag(), r2.invalidatedStag());
        assertTrue(!invalidated.isValid());
        Completion r3 = take(sRcq);
        assertEquals(WcOpcode.RECV_IMMEDIATE, r3.opcode());
        assertEquals(0xCAFEL, r3.immediateData());
        byte[] expected = new byte[70000];
        buffer(70000, 5).getBytes(0, expected);
        expected[15] += 1; // the fetch-add incremented the big-endian value at offset 8 of the target
        byte[] got = new byte[70000];
        src.memory().getBytes(0, got);
        assertArrayEquals(expected, got, "Read back the Write, with the atomic's increment");
        listener.close().sync();
    }

    @Test
    void acceptWithThisConnectionsIrdAndOrd() throws Exception {
        IwarpStack server = stack(Transport.NIO);
        ProtectionDomain spd = server.allocPd();
        Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0), MpaSettings.defaults(),
                req -> req.accept(spd, new CompletionQueue(), new CompletionQueue(), new byte[0], 2, 3));
        IwarpStack client = stack(Transport.NIO);
        QueuePair qp = client.connect(listener.localAddress(),
                ConnectOptions.of(client.allocPd()).mpa(MpaSettings.builder().ird(8).ord(8).build()))
                .get(10, TimeUnit.SECONDS);
        // RFC 6581 §3: our ORD is lowered to the Responder's IRD 2; the Responder's ORD 3 fits our IRD 8
        assertEquals(2, qp.connectionParameters().ord());
        assertEquals(8, qp.connectionParameters().ird());
        assertEquals(2, qp.connectionParameters().framing(MpaParameters.class).peerIrd());
        assertEquals(3, qp.connectionParameters().framing(MpaParameters.class).peerOrd());
        listener.close().sync();
    }
}
