package dev.iwarp.bootstrap;

import dev.iwarp.framing.DirectReadAllocator;
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

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Copies per received payload octet, over real sockets, for any framing. Every octet is copied once by the kernel
 * into the buffer a socket read names; a payload octet read into any other buffer than its destination is copied
 * a second time into its region or posted buffer, one read into its destination is not. The count:
 * {@code 2 - D / P} for P payload octets received, D of them read straight into their destination
 * ({@link DirectReadAllocator#octetsReadDirectly()}). Cumulation copies of reads shorter than 2 KiB (header and
 * trailer reads, a peer's small segments) are not counted.
 *
 * <p>{@link #measure} runs {@value #ROUNDS} RDMA Writes, then as many Reads, then as many Sends of
 * {@value #SIZE} octets each (or as many of another size) between two stacks on loopback, checks every payload
 * arrived intact, and counts the receiving side's reads of each phase: every read system call, those that found the
 * socket empty included. Close it after the test: it closes the stacks and releases the buffers.
 */
final class ReceivedCopies {
    static final int SIZE = 256 * 1024;
    static final int ROUNDS = 8;

    /**
     * Copies per received payload octet, the receiving side's socket reads per 64 KiB of payload, and how many of
     * those found the socket empty, per phase.
     */
    record Counts(double write, double readResponse, double send, double writeReads, double readResponseReads,
                  double sendReads, double writeEmpty, double readResponseEmpty, double sendEmpty) {
    }

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<ByteBuf> buffers = new ArrayList<>();

    /** Every channel's allocator of a stack: reads placed directly, summed. */
    private static final class Direct {
        final List<DirectReadAllocator> channels = new CopyOnWriteArrayList<>();

        long octets() {
            return channels.stream().mapToLong(DirectReadAllocator::octetsReadDirectly).sum();
        }

        long reads() {
            return channels.stream().mapToLong(d -> d.socketReads() + d.emptyReads()).sum();
        }

        long empty() {
            return channels.stream().mapToLong(DirectReadAllocator::emptyReads).sum();
        }
    }

    void close() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        closeables.clear();
        buffers.forEach(ByteBuf::release);
        buffers.clear();
    }

    private ByteBuf buffer(int size, int fill) {
        byte[] octets = new byte[size];
        for (int i = 0; i < size; i++) {
            octets[i] = (byte) (fill + i * 13);
        }
        // one write: under the paranoid leak detector every buffer operation records a trace
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(size, size).writeBytes(octets);
        buffers.add(b);
        return b;
    }

    private IwarpStack stack(Transport t, Direct direct) {
        IwarpStack s = IwarpStack.builder().transport(t).threads(1).channelHook(ch -> {
            DirectReadAllocator d = new DirectReadAllocator(ch.config().getRecvByteBufAllocator());
            direct.channels.add(d);
            ch.config().setRecvByteBufAllocator(d);
        }).build();
        closeables.add(s);
        return s;
    }

    private static Completion take(CompletionQueue cq) throws InterruptedException {
        Completion c = cq.take(20, TimeUnit.SECONDS);
        assertNotNull(c, "completion timed out");
        assertTrue(c.isSuccess(), c::toString);
        return c;
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] a = new byte[b.capacity()];
        b.getBytes(0, a);
        return a;
    }

    private static double copies(long direct, int size, int rounds) {
        return 2 - (double) direct / ((long) rounds * size);
    }

    /** Socket reads (the read phase's, of the receiving side's channels) per 64 KiB of payload received. */
    private static double readsPer64KiB(long reads, int size, int rounds) {
        return reads / ((double) rounds * size / 65536);
    }

    /**
     * Writes, Read Responses and Sends over {@code framing} on {@code transport}, the server listening on
     * {@code port} (0: any).
     */
    Counts measure(Transport transport, Framing framing, int port) throws Exception {
        return measure(transport, framing, port, SIZE, ROUNDS);
    }

    /** As {@link #measure(Transport, Framing, int)}, {@code rounds} messages of {@code size} octets per phase. */
    Counts measure(Transport transport, Framing framing, int port, int size, int rounds) throws Exception {
        Direct serverReads = new Direct();
        Direct clientReads = new Direct();
        IwarpStack server = stack(transport, serverReads);
        ProtectionDomain spd = server.allocPd();
        MemoryRegion target = spd.register(buffer(size, 0), Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                Access.REMOTE_READ);
        ByteBuf recv = buffer(size, 0);
        MemoryRegion recvMr = spd.register(recv, Access.LOCAL_WRITE);
        CompletionQueue serverRecvCq = new CompletionQueue();
        QueuePair[] serverQp = new QueuePair[1];
        Channel listener = server.listen(new InetSocketAddress("127.0.0.1", port), framing,
                req -> serverQp[0] = req.accept(spd, new CompletionQueue(), serverRecvCq, new byte[0]));
        IwarpStack client = stack(transport, clientReads);
        ProtectionDomain cpd = client.allocPd();
        ConnectOptions opts = ConnectOptions.of(cpd).framing(framing);
        QueuePair qp = client.connect(listener.localAddress(), opts).get(10, TimeUnit.SECONDS);
        ByteBuf src = buffer(size, 7);
        MemoryRegion srcMr = cpd.register(src, Access.LOCAL_WRITE);
        ByteBuf sink = buffer(size, 0);
        MemoryRegion sinkMr = cpd.register(sink, Access.LOCAL_WRITE);
        long id = 0;

        long before = serverReads.octets();
        long readsBefore = serverReads.reads();
        long emptyBefore = serverReads.empty();
        for (int i = 0; i < rounds; i++) {
            qp.postSend(SendRequest.rdmaWrite(++id, srcMr.all(), target.stag(), target.iova()));
            take(opts.sendCq());
        }
        // a Write completes once sent: a Read behind it completes once the target took every Write before it
        qp.postSend(SendRequest.rdmaRead(++id, sinkMr.slice(0, 1), target.stag(), target.iova()));
        take(opts.sendCq());
        double write = copies(serverReads.octets() - before, size, rounds);
        double writeReads = readsPer64KiB(serverReads.reads() - readsBefore, size, rounds);
        double writeEmpty = readsPer64KiB(serverReads.empty() - emptyBefore, size, rounds);
        assertArrayEquals(bytes(src), bytes(target.memory()), "Write");

        before = clientReads.octets();
        readsBefore = clientReads.reads();
        emptyBefore = clientReads.empty();
        for (int i = 0; i < rounds; i++) {
            qp.postSend(SendRequest.rdmaRead(++id, sinkMr.all(), target.stag(), target.iova()));
            take(opts.sendCq());
        }
        double readResponse = copies(clientReads.octets() - before, size, rounds);
        double readResponseReads = readsPer64KiB(clientReads.reads() - readsBefore, size, rounds);
        double readResponseEmpty = readsPer64KiB(clientReads.empty() - emptyBefore, size, rounds);
        assertArrayEquals(bytes(src), bytes(sink), "Read Response");

        before = serverReads.octets();
        readsBefore = serverReads.reads();
        emptyBefore = serverReads.empty();
        for (int i = 0; i < rounds; i++) {
            serverQp[0].postRecv(RecvRequest.of(++id, recvMr.all()));
            qp.postSend(SendRequest.send(++id, srcMr.all()));
            take(opts.sendCq());
            take(serverRecvCq);
        }
        double send = copies(serverReads.octets() - before, size, rounds);
        double sendReads = readsPer64KiB(serverReads.reads() - readsBefore, size, rounds);
        double sendEmpty = readsPer64KiB(serverReads.empty() - emptyBefore, size, rounds);
        assertArrayEquals(bytes(src), bytes(recv), "Send");
        listener.close().sync();
        return new Counts(write, readResponse, send, writeReads, readResponseReads, sendReads, writeEmpty,
                readResponseEmpty, sendEmpty);
    }
}
