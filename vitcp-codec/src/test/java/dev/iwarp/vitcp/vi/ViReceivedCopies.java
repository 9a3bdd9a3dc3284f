package dev.iwarp.vitcp.vi;

import dev.iwarp.testkit.DirectReads;
import dev.iwarp.testkit.TestResources;
import dev.iwarp.vitcp.VitcpConfig;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Copies per received payload octet over VI/TCP, over real sockets, counted as the iWARP framings' copy count
 * counts them ({@link DirectReads}: {@code 2 - D / P}). Copies the decoder's cumulation makes of a segment spread
 * over several reads come on top and are not counted.
 *
 * <p>{@link #measure} runs {@value #ROUNDS} RDMA Writes, then as many RDMA Reads, then as many Sends of
 * {@value #SIZE} octets each between two VI providers on loopback, checks every payload arrived intact, and counts
 * the receiving side's reads of each phase. Close it after the test: it closes the providers and releases the
 * buffers.
 */
final class ViReceivedCopies {
    static final int SIZE = 256 * 1024;
    static final int ROUNDS = 8;
    /** Payload octets received in each phase. */
    private static final long PAYLOAD = (long) ROUNDS * SIZE;
    private static final byte[] CLIENT = "client".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SERVER = "server".getBytes(StandardCharsets.US_ASCII);

    /** The Netty transports measured. */
    enum Transport {
        NIO, EPOLL;

        String unavailableReason() {
            return this == NIO || Epoll.isAvailable() ? null : "no epoll here: " + Epoll.unavailabilityCause();
        }

        IoHandlerFactory ioHandlers() {
            return this == NIO ? NioIoHandler.newFactory() : EpollIoHandler.newFactory();
        }

        ViProvider provider(EventLoopGroup group) {
            return this == NIO ? new ViProvider(group, NioSocketChannel.class, NioServerSocketChannel.class)
                    : new ViProvider(group, EpollSocketChannel.class, EpollServerSocketChannel.class);
        }
    }

    /** Copies per received payload octet, and the receiving side's socket reads per 64 KiB of payload, per phase. */
    record Counts(double write, double readResponse, double send, double writeReads, double readResponseReads,
                  double sendReads) {
    }

    private final TestResources resources = new TestResources();
    private final List<ViMemoryRegion> regions = new ArrayList<>();

    void close() throws Exception {
        regions.forEach(ViMemoryRegion::deregister);
        regions.clear();
        resources.close();
    }

    private ViMemoryRegion region(ViProtectionDomain pd, int fill, ViAccess... access) {
        ViMemoryRegion r = pd.register(resources.buffer(SIZE, 13, fill), access);
        regions.add(r);
        return r;
    }

    private ViProvider provider(Transport t) {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, t.ioHandlers());
        resources.closeAfter(() -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly());
        return resources.closeAfter(t.provider(group));
    }

    /** Waits (liveness bound only, not a performance check) for the next completion, which must succeed. */
    private static ViCompletion take(ViCompletionQueue cq) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        ViCompletion c;
        while ((c = cq.poll()) == null) {
            if (System.nanoTime() > end) {
                throw new AssertionError("no completion");
            }
            Thread.sleep(1);
        }
        assertEquals(ViStatus.SUCCESS, c.status(), c::toString);
        return c;
    }

    private static byte[] bytes(ViMemoryRegion r) {
        byte[] a = new byte[r.length()];
        r.buffer().getBytes(0, a);
        return a;
    }

    /** Writes, Read Responses and Sends with {@code config} on {@code transport}, the server listening on {@code port}. */
    Counts measure(Transport transport, VitcpConfig config, int port) throws Exception {
        DirectReads serverReads = new DirectReads();
        DirectReads clientReads = new DirectReads();
        ViProvider server = provider(transport);
        ViListener listener = server.listen(new InetSocketAddress("127.0.0.1", port), config, serverReads::count);
        resources.closeAfter(listener);
        ViProtectionDomain spd = new ViProtectionDomain();
        ViCompletionQueue serverSendCq = new ViCompletionQueue();
        ViCompletionQueue serverRecvCq = new ViCompletionQueue();
        ViEndpoint b = new ViEndpoint(spd, serverSendCq, serverRecvCq, config);
        ViMemoryRegion target = region(spd, 0, ViAccess.RDMA_WRITE, ViAccess.RDMA_READ);
        ViMemoryRegion recv = region(spd, 0);
        listener.register(SERVER, config, b::accept);

        ViProvider client = provider(transport);
        ViProtectionDomain cpd = new ViProtectionDomain();
        ViCompletionQueue sendCq = new ViCompletionQueue();
        ViEndpoint a = new ViEndpoint(cpd, sendCq, new ViCompletionQueue(), config);
        ViMemoryRegion src = region(cpd, 7);
        ViMemoryRegion sink = region(cpd, 0);
        client.connect(a, listener.localAddress(), CLIENT, SERVER, clientReads::count).get(20, TimeUnit.SECONDS);
        long id = 0;

        DirectReads.Phase phase = serverReads.phase();
        for (int i = 0; i < ROUNDS; i++) {
            a.postSend(ViSendRequest.rdmaWrite(++id, target.address(), target.handle(), src.all()));
            take(sendCq);
        }
        // a Write completes once handed to TCP: a Read behind it completes once the target took every Write before it
        a.postSend(ViSendRequest.rdmaRead(++id, target.address(), target.handle(), sink.segment(0, 1)));
        take(sendCq);
        double write = phase.copiesPerOctet(PAYLOAD);
        double writeReads = phase.readsPer64KiB(PAYLOAD);
        assertArrayEquals(bytes(src), bytes(target), "Write");

        phase = clientReads.phase();
        for (int i = 0; i < ROUNDS; i++) {
            a.postSend(ViSendRequest.rdmaRead(++id, target.address(), target.handle(), sink.all()));
            take(sendCq);
        }
        double readResponse = phase.copiesPerOctet(PAYLOAD);
        double readResponseReads = phase.readsPer64KiB(PAYLOAD);
        assertArrayEquals(bytes(src), bytes(sink), "Read Response");

        phase = serverReads.phase();
        for (int i = 0; i < ROUNDS; i++) {
            b.postRecv(ViRecvRequest.of(++id, recv.all()));
            a.postSend(ViSendRequest.send(++id, src.all()));
            take(sendCq);
            take(serverRecvCq);
        }
        double send = phase.copiesPerOctet(PAYLOAD);
        double sendReads = phase.readsPer64KiB(PAYLOAD);
        assertArrayEquals(bytes(src), bytes(recv), "Send");
        a.disconnect();
        return new Counts(write, readResponse, send, writeReads, readResponseReads, sendReads);
    }
}
