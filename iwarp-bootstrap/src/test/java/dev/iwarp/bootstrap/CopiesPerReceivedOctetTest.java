package dev.iwarp.bootstrap;

import dev.iwarp.framing.DirectReadAllocator;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Copies per received payload octet, over real sockets. Every octet is copied once by the kernel into the
 * buffer a socket read names; a payload octet read into any other buffer than its destination is copied a
 * second time into its region or posted buffer, one read into its destination is not. The count:
 * {@code 2 - D / P} for P payload octets received, D of them read straight into their destination
 * ({@link DirectReadAllocator#octetsReadDirectly()}). Cumulation copies of reads shorter than 2 KiB (header
 * and trailer reads, a peer's small segments) are not counted.
 */
class CopiesPerReceivedOctetTest {
    private static final int SIZE = 256 * 1024;
    private static final int ROUNDS = 8;

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<ByteBuf> buffers = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        buffers.forEach(ByteBuf::release);
    }

    private ByteBuf buffer(int size, int fill) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        for (int i = 0; i < size; i++) {
            b.writeByte(fill + i * 13);
        }
        buffers.add(b);
        return b;
    }

    /** Every channel's allocator of a stack: reads placed directly, summed. */
    static final class Direct {
        final List<DirectReadAllocator> channels = new java.util.concurrent.CopyOnWriteArrayList<>();

        long octets() {
            return channels.stream().mapToLong(DirectReadAllocator::octetsReadDirectly).sum();
        }

        long reads() {
            return channels.stream().mapToLong(DirectReadAllocator::socketReads).sum();
        }
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

    private static double copies(long direct, long payload) {
        return 2 - (double) direct / payload;
    }

    /** Socket reads (the read phase's, of the receiving side's channels) per 64 KiB of payload received. */
    private static double readsPer64KiB(long reads) {
        return reads / ((double) ROUNDS * SIZE / 65536);
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"NIO", "EPOLL"})
    void writeReadResponseAndSend(Transport transport) throws Exception {
        assumeTrue(transport.unavailableReason() == null);
        Direct serverReads = new Direct();
        Direct clientReads = new Direct();
        IwarpStack server = stack(transport, serverReads);
        ProtectionDomain spd = server.allocPd();
        MemoryRegion target = spd.register(buffer(SIZE, 0), Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                Access.REMOTE_READ);
        ByteBuf recv = buffer(SIZE, 0);
        MemoryRegion recvMr = spd.register(recv, Access.LOCAL_WRITE);
        CompletionQueue serverRecvCq = new CompletionQueue();
        QueuePair[] serverQp = new QueuePair[1];
        Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0), MpaSettings.defaults(), req -> {
            serverQp[0] = req.accept(spd, new CompletionQueue(), serverRecvCq, new byte[0]);
        });
        IwarpStack client = stack(transport, clientReads);
        ProtectionDomain cpd = client.allocPd();
        ConnectOptions opts = ConnectOptions.of(cpd);
        QueuePair qp = client.connect(listener.localAddress(), opts).get(10, TimeUnit.SECONDS);
        ByteBuf src = buffer(SIZE, 7);
        MemoryRegion srcMr = cpd.register(src, Access.LOCAL_WRITE);
        ByteBuf sink = buffer(SIZE, 0);
        MemoryRegion sinkMr = cpd.register(sink, Access.LOCAL_WRITE);
        long id = 0;

        long before = serverReads.octets();
        long readsBefore = serverReads.reads();
        for (int i = 0; i < ROUNDS; i++) {
            qp.postSend(SendRequest.rdmaWrite(++id, srcMr.all(), target.stag(), target.iova()));
            take(opts.sendCq());
        }
        // a Write completes once sent: a Read behind it completes once the target took every Write before it
        qp.postSend(SendRequest.rdmaRead(++id, sinkMr.slice(0, 1), target.stag(), target.iova()));
        take(opts.sendCq());
        double write = copies(serverReads.octets() - before, (long) ROUNDS * SIZE);
        double writeReads = readsPer64KiB(serverReads.reads() - readsBefore);
        assertArrayEquals(bytes(src), bytes(target.memory()), "Write");

        before = clientReads.octets();
        readsBefore = clientReads.reads();
        for (int i = 0; i < ROUNDS; i++) {
            qp.postSend(SendRequest.rdmaRead(++id, sinkMr.all(), target.stag(), target.iova()));
            take(opts.sendCq());
        }
        double readResponse = copies(clientReads.octets() - before, (long) ROUNDS * SIZE);
        double readResponseReads = readsPer64KiB(clientReads.reads() - readsBefore);
        assertArrayEquals(bytes(src), bytes(sink), "Read Response");

        before = serverReads.octets();
        readsBefore = serverReads.reads();
        for (int i = 0; i < ROUNDS; i++) {
            serverQp[0].postRecv(RecvRequest.of(++id, recvMr.all()));
            qp.postSend(SendRequest.send(++id, srcMr.all()));
            take(opts.sendCq());
            take(serverRecvCq);
        }
        double send = copies(serverReads.octets() - before, (long) ROUNDS * SIZE);
        double sendReads = readsPer64KiB(serverReads.reads() - readsBefore);
        assertArrayEquals(bytes(src), bytes(recv), "Send");
        System.out.printf("copies per received payload octet on %s: Write %.3f, Read Response %.3f, Send %.3f%n",
                transport, write, readResponse, send);
        System.out.printf("socket reads per 64 KiB of payload on %s: Write %.1f, Read Response %.1f, Send %.1f%n",
                transport, writeReads, readResponseReads, sendReads);
        // Read Responses: every payload read into its region but the first octets of the first one. Writes measured
        // 1.02-1.08 on both transports: some of a Write phase's FPDUs still come in ordinary reads (not yet found)
        assertTrue(write <= 1.10, "Write: " + write);
        assertTrue(readResponse <= 1.02, "Read Response: " + readResponse);
        // a Send that passes the untagged queue's checks is read straight into the posted receive (2.000 before)
        assertTrue(send <= 1.05, "Send: " + send);
        listener.close().sync();
    }
}
