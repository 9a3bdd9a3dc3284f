package dev.iwarp.vitcp.vi;

import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.vitcp.VitcpConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Copies per received payload octet over VI/TCP, over real sockets, counted as the iWARP framings' copy count
 * counts them: every octet is copied once by the kernel into the buffer a socket read names; a payload octet read
 * into any other buffer than its destination is copied a second time into its region or posted receive, one read
 * into its destination is not. The count: {@code 2 - D / P} for P payload octets received, D of them read straight
 * into their destination ({@link DirectReadAllocator#octetsReadDirectly()}). Copies the decoder's cumulation
 * makes of a segment spread over several reads come on top and are not counted.
 *
 * <p>{@link #measure} runs {@value #ROUNDS} RDMA Writes, then as many RDMA Reads, then as many Sends of
 * {@value #SIZE} octets each between two VI providers on loopback, checks every payload arrived intact, and counts
 * the receiving side's reads of each phase. Close it after the test: it closes the providers and releases the
 * buffers.
 */
final class ViReceivedCopies {
    static final int SIZE = 256 * 1024;
    static final int ROUNDS = 8;
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

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<ByteBuf> buffers = new ArrayList<>();
    private final List<ViMemoryRegion> regions = new ArrayList<>();

    /** Every channel's allocator of one side: reads placed directly, summed. */
    private static final class Direct {
        final List<DirectReadAllocator> channels = new CopyOnWriteArrayList<>();

        void count(Channel ch) {
            DirectReadAllocator d = new DirectReadAllocator(ch.config().getRecvByteBufAllocator());
            channels.add(d);
            ch.config().setRecvByteBufAllocator(d);
        }

        long octets() {
            return channels.stream().mapToLong(DirectReadAllocator::octetsReadDirectly).sum();
        }

        /** Read system calls, those that found the socket empty included. */
        long reads() {
            return channels.stream().mapToLong(d -> d.socketReads() + d.emptyReads()).sum();
        }
    }

    void close() throws Exception {
        regions.forEach(ViMemoryRegion::deregister);
        regions.clear();
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        closeables.clear();
        buffers.forEach(ByteBuf::release);
        buffers.clear();
    }

    private ViMemoryRegion region(ViProtectionDomain pd, int fill, ViAccess... access) {
        byte[] octets = new byte[SIZE];
        for (int i = 0; i < SIZE; i++) {
            octets[i] = (byte) (fill + i * 13);
        }
        // one write: under the paranoid leak detector every buffer operation records a trace
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(SIZE, SIZE).writeBytes(octets);
        buffers.add(b);
        ViMemoryRegion r = pd.register(b, access);
        regions.add(r);
        return r;
    }

    private ViProvider provider(Transport t) {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, t.ioHandlers());
        closeables.add(() -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly());
        ViProvider p = t.provider(group);
        closeables.add(p);
        return p;
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

    private static double copies(long direct) {
        return 2 - (double) direct / ((long) ROUNDS * SIZE);
    }

    /** Socket reads (the phase's, of the receiving side's channels) per 64 KiB of payload received. */
    private static double readsPer64KiB(long reads) {
        return reads / ((double) ROUNDS * SIZE / 65536);
    }

    /** Writes, Read Responses and Sends with {@code config} on {@code transport}, the server listening on {@code port}. */
    Counts measure(Transport transport, VitcpConfig config, int port) throws Exception {
        Direct serverReads = new Direct();
        Direct clientReads = new Direct();
        ViProvider server = provider(transport);
        ViListener listener = server.listen(new InetSocketAddress("127.0.0.1", port), config, serverReads::count);
        closeables.add(listener);
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

        long before = serverReads.octets();
        long readsBefore = serverReads.reads();
        for (int i = 0; i < ROUNDS; i++) {
            a.postSend(ViSendRequest.rdmaWrite(++id, target.address(), target.handle(), src.all()));
            take(sendCq);
        }
        // a Write completes once handed to TCP: a Read behind it completes once the target took every Write before it
        a.postSend(ViSendRequest.rdmaRead(++id, target.address(), target.handle(), sink.segment(0, 1)));
        take(sendCq);
        double write = copies(serverReads.octets() - before);
        double writeReads = readsPer64KiB(serverReads.reads() - readsBefore);
        assertArrayEquals(bytes(src), bytes(target), "Write");

        before = clientReads.octets();
        readsBefore = clientReads.reads();
        for (int i = 0; i < ROUNDS; i++) {
            a.postSend(ViSendRequest.rdmaRead(++id, target.address(), target.handle(), sink.all()));
            take(sendCq);
        }
        double readResponse = copies(clientReads.octets() - before);
        double readResponseReads = readsPer64KiB(clientReads.reads() - readsBefore);
        assertArrayEquals(bytes(src), bytes(sink), "Read Response");

        before = serverReads.octets();
        readsBefore = serverReads.reads();
        for (int i = 0; i < ROUNDS; i++) {
            b.postRecv(ViRecvRequest.of(++id, recv.all()));
            a.postSend(ViSendRequest.send(++id, src.all()));
            take(sendCq);
            take(serverRecvCq);
        }
        double send = copies(serverReads.octets() - before);
        double sendReads = readsPer64KiB(serverReads.reads() - readsBefore);
        assertArrayEquals(bytes(src), bytes(recv), "Send");
        a.disconnect();
        return new Counts(write, readResponse, send, writeReads, readResponseReads, sendReads);
    }
}
