package dev.iwarp.bootstrap;

import dev.iwarp.testkit.DirectReads;
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

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Copies per received payload octet, over real sockets, for any framing, counted as {@link DirectReads} says
 * ({@code 2 - D / P}). Cumulation copies of reads shorter than 2 KiB (header and trailer reads, a peer's small
 * segments) are not counted.
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

    private final TestResources resources = new TestResources();

    void close() throws Exception {
        resources.close();
    }

    private ByteBuf buffer(int size, int fill) {
        return resources.buffer(size, 13, fill);
    }

    private IwarpStack stack(Transport t, DirectReads direct) {
        return resources.closeAfter(IwarpStack.builder().transport(t).threads(1).channelHook(direct::count).build());
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

    /**
     * Writes, Read Responses and Sends over {@code framing} on {@code transport}, the server listening on
     * {@code port} (0: any).
     */
    Counts measure(Transport transport, Framing framing, int port) throws Exception {
        return measure(transport, framing, port, SIZE, ROUNDS);
    }

    /** As {@link #measure(Transport, Framing, int)}, {@code rounds} messages of {@code size} octets per phase. */
    Counts measure(Transport transport, Framing framing, int port, int size, int rounds) throws Exception {
        long payload = (long) rounds * size; // payload octets received in each phase
        DirectReads serverReads = new DirectReads();
        DirectReads clientReads = new DirectReads();
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

        DirectReads.Phase phase = serverReads.phase();
        for (int i = 0; i < rounds; i++) {
            qp.postSend(SendRequest.rdmaWrite(++id, srcMr.all(), target.stag(), target.iova()));
            take(opts.sendCq());
        }
        // a Write completes once sent: a Read behind it completes once the target took every Write before it
        qp.postSend(SendRequest.rdmaRead(++id, sinkMr.slice(0, 1), target.stag(), target.iova()));
        take(opts.sendCq());
        double write = phase.copiesPerOctet(payload);
        double writeReads = phase.readsPer64KiB(payload);
        double writeEmpty = phase.emptyPer64KiB(payload);
        assertArrayEquals(bytes(src), bytes(target.memory()), "Write");

        phase = clientReads.phase();
        for (int i = 0; i < rounds; i++) {
            qp.postSend(SendRequest.rdmaRead(++id, sinkMr.all(), target.stag(), target.iova()));
            take(opts.sendCq());
        }
        double readResponse = phase.copiesPerOctet(payload);
        double readResponseReads = phase.readsPer64KiB(payload);
        double readResponseEmpty = phase.emptyPer64KiB(payload);
        assertArrayEquals(bytes(src), bytes(sink), "Read Response");

        phase = serverReads.phase();
        for (int i = 0; i < rounds; i++) {
            serverQp[0].postRecv(RecvRequest.of(++id, recvMr.all()));
            qp.postSend(SendRequest.send(++id, srcMr.all()));
            take(opts.sendCq());
            take(serverRecvCq);
        }
        double send = phase.copiesPerOctet(payload);
        double sendReads = phase.readsPer64KiB(payload);
        double sendEmpty = phase.emptyPer64KiB(payload);
        assertArrayEquals(bytes(src), bytes(recv), "Send");
        listener.close().sync();
        return new Counts(write, readResponse, send, writeReads, readResponseReads, sendReads, writeEmpty,
                readResponseEmpty, sendEmpty);
    }
}
