package dev.iwarp.bootstrap;

import dev.iwarp.ift.IftSettings;
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
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Copies per received payload octet over IFT, over real sockets, counted as {@link CopiesPerReceivedOctetTest}
 * counts them for MPA: {@code 2 - D / P} for P payload octets received, D of them read straight into their
 * destination. Each case runs twice on the same transport: with the framer's direct reads (as the stack binds
 * IFT) and without them ({@link IftFraming#withoutDirectReads()}: every payload read into a buffer first and
 * copied into place, as IFT received before it read directly). Payload CRCs on, so the CRC over what was read
 * into place is what lets it complete.
 */
class IftCopiesPerReceivedOctetTest {
    private static final int SIZE = 256 * 1024;
    private static final int ROUNDS = 8;
    /** TCP ports of this test: one per transport and mode. */
    private static final int PORT = 61040;

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
        byte[] octets = new byte[size];
        for (int i = 0; i < size; i++) {
            octets[i] = (byte) (fill + i * 13);
        }
        // one write: under the paranoid leak detector every buffer operation records a trace
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(size, size).writeBytes(octets);
        buffers.add(b);
        return b;
    }

    private IwarpStack stack(Transport t, CopiesPerReceivedOctetTest.Direct direct) {
        IwarpStack s = IwarpStack.builder().transport(t).threads(1).channelHook(ch -> {
            dev.iwarp.framing.DirectReadAllocator d =
                    new dev.iwarp.framing.DirectReadAllocator(ch.config().getRecvByteBufAllocator());
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

    /** Write, Read Response and Send copies per received payload octet: {write, readResponse, send}. */
    private double[] measure(Transport transport, boolean directReads, int port) throws Exception {
        CopiesPerReceivedOctetTest.Direct serverReads = new CopiesPerReceivedOctetTest.Direct();
        CopiesPerReceivedOctetTest.Direct clientReads = new CopiesPerReceivedOctetTest.Direct();
        IftSettings settings = IftSettings.builder().sendCrcs(true, true).checkCrcs(true, true).build();
        IftFraming framing = directReads ? IftFraming.of(settings) : IftFraming.of(settings).withoutDirectReads();
        IwarpStack server = stack(transport, serverReads);
        ProtectionDomain spd = server.allocPd();
        MemoryRegion target = spd.register(buffer(SIZE, 0), Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                Access.REMOTE_READ);
        ByteBuf recv = buffer(SIZE, 0);
        MemoryRegion recvMr = spd.register(recv, Access.LOCAL_WRITE);
        CompletionQueue serverRecvCq = new CompletionQueue();
        QueuePair[] serverQp = new QueuePair[1];
        Channel listener = server.listen(new InetSocketAddress("127.0.0.1", port), framing,
                req -> serverQp[0] = req.accept(spd, new CompletionQueue(), serverRecvCq, new byte[0]));
        IwarpStack client = stack(transport, clientReads);
        ProtectionDomain cpd = client.allocPd();
        ConnectOptions opts = ConnectOptions.of(cpd).framing(framing);
        QueuePair qp = client.connect(listener.localAddress(), opts).get(10, TimeUnit.SECONDS);
        ByteBuf src = buffer(SIZE, 7);
        MemoryRegion srcMr = cpd.register(src, Access.LOCAL_WRITE);
        ByteBuf sink = buffer(SIZE, 0);
        MemoryRegion sinkMr = cpd.register(sink, Access.LOCAL_WRITE);
        long id = 0;

        long before = serverReads.octets();
        for (int i = 0; i < ROUNDS; i++) {
            qp.postSend(SendRequest.rdmaWrite(++id, srcMr.all(), target.stag(), target.iova()));
            take(opts.sendCq());
        }
        // a Write completes once sent: a Read behind it completes once the target took every Write before it
        qp.postSend(SendRequest.rdmaRead(++id, sinkMr.slice(0, 1), target.stag(), target.iova()));
        take(opts.sendCq());
        double write = copies(serverReads.octets() - before, (long) ROUNDS * SIZE);
        assertArrayEquals(bytes(src), bytes(target.memory()), "Write");

        before = clientReads.octets();
        for (int i = 0; i < ROUNDS; i++) {
            qp.postSend(SendRequest.rdmaRead(++id, sinkMr.all(), target.stag(), target.iova()));
            take(opts.sendCq());
        }
        double readResponse = copies(clientReads.octets() - before, (long) ROUNDS * SIZE);
        assertArrayEquals(bytes(src), bytes(sink), "Read Response");

        before = serverReads.octets();
        for (int i = 0; i < ROUNDS; i++) {
            serverQp[0].postRecv(RecvRequest.of(++id, recvMr.all()));
            qp.postSend(SendRequest.send(++id, srcMr.all()));
            take(opts.sendCq());
            take(serverRecvCq);
        }
        double send = copies(serverReads.octets() - before, (long) ROUNDS * SIZE);
        assertArrayEquals(bytes(src), bytes(recv), "Send");
        listener.close().sync();
        return new double[] {write, readResponse, send};
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"NIO", "EPOLL"})
    void writeReadResponseAndSend(Transport transport) throws Exception {
        assumeTrue(transport.unavailableReason() == null);
        double[] without = measure(transport, false, PORT + 4 * transport.ordinal());
        double[] with = measure(transport, true, PORT + 4 * transport.ordinal() + 1);
        System.out.printf("IFT copies per received payload octet on %s: Write %.3f -> %.3f, Read Response %.3f -> %.3f,"
                + " Send %.3f -> %.3f (without -> with direct reads)%n", transport, without[0], with[0], without[1],
                with[1], without[2], with[2]);
        assertEquals(2.0, without[0], 1e-9, "without direct reads every Write octet is copied twice");
        assertEquals(2.0, without[1], 1e-9, "without direct reads every Read Response octet is copied twice");
        // a Write's and a Read Response's payload octets are read straight into the region, except those a read
        // took in before the header was known (the first of a stream, a peer's segment boundary)
        assertTrue(with[0] < 1.1, "Write: " + with[0]);
        assertTrue(with[1] < 1.1, "Read Response: " + with[1]);
        assertEquals(2.0, without[2], 1e-9, "without direct reads every Send octet is copied twice");
        // a Send that passes the untagged queue's checks is read straight into the posted receive
        assertTrue(with[2] < 1.1, "Send: " + with[2]);
    }
}
