package dev.iwarp.bootstrap;

import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ift.IftParameters;
import dev.iwarp.ift.IftSettings;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.testkit.TestResources;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcOpcode;
import dev.iwarp.verbs.WcStatus;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DDP and RDMAP over IFT through {@link IwarpStack}, over real TCP on 127.0.0.1: every RDMA operation
 * at the sizes that matter with each header/payload CRC combination, on NIO and epoll, and a
 * Terminate carried by IFT frames.
 */
class IftStackLoopbackTest {
    @RegisterExtension
    final TestResources resources = new TestResources();

    private ByteBuf buffer(int size, int seed) {
        return resources.buffer(size, 7, seed);
    }

    private IwarpStack stack(Transport t) {
        return resources.closeAfter(IwarpStack.builder().transport(t).threads(1).build());
    }

    private static Completion take(CompletionQueue cq) throws InterruptedException {
        Completion c = cq.take(20, TimeUnit.SECONDS);
        assertNotNull(c, "completion timed out");
        return c;
    }

    private static byte[] bytes(ByteBuf b, int length) {
        byte[] a = new byte[length];
        b.getBytes(0, a);
        return a;
    }

    /** A connected pair over IFT: the client's QP and the server's, with their completion queues. */
    private final class Connected {
        final ProtectionDomain spd;
        final ProtectionDomain cpd;
        final CompletionQueue serverSend = new CompletionQueue();
        final CompletionQueue serverRecv = new CompletionQueue();
        final ConnectOptions options;
        final QueuePair client;
        final QueuePair server;

        Connected(Transport transport, IftSettings settings) throws Exception {
            IwarpStack serverStack = stack(transport);
            IwarpStack clientStack = stack(transport);
            spd = serverStack.allocPd();
            CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
            Channel listener = serverStack.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                    IftFraming.of(settings), req -> accepted.complete(req.accept(spd, serverSend, serverRecv, new byte[0])));
            resources.closeAfter(() -> listener.close().sync());
            cpd = clientStack.allocPd();
            options = ConnectOptions.of(cpd).framing(IftFraming.of(settings));
            client = clientStack.connect(listener.localAddress(), options).get(10, TimeUnit.SECONDS);
            server = accepted.get(10, TimeUnit.SECONDS);
            server.established().get(10, TimeUnit.SECONDS);
        }
    }

    @ParameterizedTest(name = "{0} header CRC {1} payload CRC {2}")
    @CsvSource({"NIO, false, false", "NIO, true, false", "NIO, false, true", "NIO, true, true",
            "EPOLL, false, false", "EPOLL, true, false", "EPOLL, false, true", "EPOLL, true, true"})
    void writeReadSendAtEverySize(Transport transport, boolean headerCrc, boolean payloadCrc) throws Exception {
        if (transport == Transport.EPOLL && Transport.auto() != Transport.EPOLL) {
            return; // epoll not available on this machine
        }
        Connected c = new Connected(transport, IftSettings.builder().sendCrcs(headerCrc, payloadCrc)
                .checkCrcs(headerCrc, payloadCrc).build());
        LlpParameters p = c.client.connectionParameters();
        assertEquals("IFT", p.framingName());
        IftParameters ift = p.framing(IftParameters.class);
        assertEquals(headerCrc, ift.txHeaderCrc());
        assertEquals(payloadCrc, ift.txPayloadCrc());
        assertEquals(payloadCrc, p.digestsPayload());
        int mulpdu = p.mulpdu();
        long wr = 0;
        for (int size : new int[] {0, 1, mulpdu - 1, mulpdu, mulpdu + 1, 1 << 20, 16 << 20}) {
            int n = Math.max(size, 1);
            MemoryRegion src = c.cpd.register(buffer(n, size), Access.LOCAL_WRITE);
            MemoryRegion target = c.spd.register(buffer(n, 0), Access.REMOTE_WRITE, Access.REMOTE_READ,
                    Access.LOCAL_WRITE);
            c.client.postSend(SendRequest.rdmaWrite(++wr, src.slice(0, size), target.stag(), target.iova()));
            assertTrue(take(c.options.sendCq()).isSuccess());
            // the Read's completion implies the Write before it was placed (RFC 5040 §5.5)
            MemoryRegion sink = c.cpd.register(buffer(n, 0), Access.LOCAL_WRITE);
            c.client.postSend(SendRequest.rdmaRead(++wr, sink.slice(0, size), target.stag(), target.iova()));
            Completion read = take(c.options.sendCq());
            assertTrue(read.isSuccess(), read::toString);
            assertArrayEquals(bytes(src.memory(), size), bytes(sink.memory(), size), "Write then Read of " + size);
            MemoryRegion recv = c.spd.register(buffer(n, 0), Access.LOCAL_WRITE);
            c.server.postRecv(RecvRequest.of(size, recv.slice(0, size)));
            c.client.postSend(SendRequest.send(++wr, src.slice(0, size)));
            assertTrue(take(c.options.sendCq()).isSuccess());
            Completion r = take(c.serverRecv);
            assertEquals(size, r.byteLength());
            assertArrayEquals(bytes(src.memory(), size), bytes(recv.memory(), size), "Send of " + size);
            for (MemoryRegion mr : List.of(src, target, sink, recv)) {
                mr.deregister();
            }
        }
    }

    @Test
    void sendVariantsImmediateDataAndAtomics() throws Exception {
        Connected c = new Connected(Transport.auto(), IftSettings.defaults());
        MemoryRegion recv = c.spd.register(buffer(256, 0), Access.LOCAL_WRITE);
        for (int i = 0; i < 3; i++) {
            c.server.postRecv(RecvRequest.of(i, recv.slice(i * 64, 64)));
        }
        MemoryRegion invalidatable = c.spd.register(buffer(8, 0), Access.REMOTE_WRITE, Access.REMOTE_INVALIDATE);
        MemoryRegion src = c.cpd.register(buffer(64, 3), Access.LOCAL_WRITE);
        c.client.postSend(SendRequest.send(1, src.slice(0, 10)).solicited());
        c.client.postSend(SendRequest.sendWithInvalidate(2, src.slice(0, 20), invalidatable.stag()));
        c.client.postSend(SendRequest.immediateData(3, 0x1122334455667788L));
        Completion s1 = take(c.serverRecv);
        assertTrue(s1.solicited());
        Completion s2 = take(c.serverRecv);
        assertTrue(s2.hasInvalidatedStag());
        assertFalse(invalidatable.isValid());
        Completion s3 = take(c.serverRecv);
        assertEquals(WcOpcode.RECV_IMMEDIATE, s3.opcode());
        assertEquals(0x1122334455667788L, s3.immediateData());
        MemoryRegion counter = c.spd.register(buffer(8, 0), Access.REMOTE_ATOMIC);
        counter.memory().setLong(0, 41);
        MemoryRegion result = c.cpd.register(buffer(8, 0), Access.LOCAL_WRITE);
        for (int i = 0; i < 3; i++) {
            take(c.options.sendCq());
        }
        c.client.postSend(SendRequest.fetchAdd(4, result.all(), counter.stag(), counter.iova(), 1, 0));
        Completion f = take(c.options.sendCq());
        assertTrue(f.isSuccess(), f::toString);
        assertEquals(41, f.immediateData());
        assertEquals(42, counter.memory().getLong(0));
    }

    @Test
    void terminateTravelsInIftFrames() throws Exception {
        Connected c = new Connected(Transport.auto(), IftSettings.builder().sendCrcs(true, true).checkCrcs(true, true)
                .build());
        MemoryRegion target = c.spd.register(buffer(64, 0), Access.REMOTE_WRITE);
        MemoryRegion src = c.cpd.register(buffer(64, 1), Access.LOCAL_WRITE);
        MemoryRegion sink = c.cpd.register(buffer(8, 0), Access.LOCAL_WRITE);
        // both posted in one event-loop task: the Read is on the wire before the Terminate can arrive (from the
        // test thread, a loaded machine could let the Terminate in between and the Read would be flushed instead)
        c.client.channel().eventLoop().submit(() -> {
            c.client.postSend(SendRequest.rdmaWrite(1, src.all(), target.stag() ^ 0x100, target.iova()));
            c.client.postSend(SendRequest.rdmaRead(2, sink.all(), target.stag(), target.iova()));
        }).sync();
        assertTrue(take(c.options.sendCq()).isSuccess(), "the Write completes when sent");
        assertEquals(WcStatus.REM_ACCESS_ERR, take(c.options.sendCq()).status());
        assertEquals(new TerminateCause(1, 1, 0x00), c.client.peerTerminate().cause(), "DDP invalid STag");
        c.client.close().await(5, TimeUnit.SECONDS);
        assertEquals(QpState.ERROR, c.client.state());
    }
}
