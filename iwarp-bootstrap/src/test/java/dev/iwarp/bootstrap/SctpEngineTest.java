package dev.iwarp.bootstrap;

import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.sctp.AwsSequencer;
import dev.iwarp.sctp.SctpAdaptation;
import dev.iwarp.sctp.SctpIndication;
import dev.iwarp.sctp.SctpSettings;
import dev.iwarp.sctp.SctpShim;
import dev.iwarp.testkit.TestResources;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcOpcode;
import dev.iwarp.verbs.WcStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.sctp.SctpMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * DDP and RDMAP over the SCTP adaptation through {@link SctpFraming} and {@link SctpLlpAdapter}, on an
 * in-memory SCTP pair ({@link SctpPair}): every RDMA operation at 0, 1, MULPDU-1, MULPDU, MULPDU+1
 * octets and 1 MiB, in order and with arrivals shuffled through a reorder window that wraps many times;
 * Send variants, immediate data,
 * atomics, a Terminate; and hostile messages (unregistered STag, offset out of bounds, AWS far ahead,
 * extension disagreeing with the DDP header), none of which places anything outside a region.
 */
class SctpEngineTest {
    @RegisterExtension
    final TestResources resources = new TestResources();
    /** Seconds without a message moving after which a wait for a completion fails: a stall, not slowness. */
    private static final int STALL_SECONDS = 60;
    /** Reorder window of {@link #writeReadSendAtEverySize}: wraps many times. */
    private static final int REORDER_WINDOW = 64;
    /** The pair of the running test. */
    private SctpPair current;

    private ByteBuf buffer(int size, int seed) {
        return resources.buffer(size, 7, seed);
    }

    private SctpPair pair(boolean unordered) throws Exception {
        return pair(SctpPair.settings().build(), unordered);
    }

    private SctpPair pair(SctpSettings settings, boolean unordered) throws Exception {
        SctpPair p = resources.closeAfter(new SctpPair(settings, unordered));
        current = p;
        return p;
    }

    /**
     * The next completion, waited for as long as the pair makes progress: fails once no message moved for {@value
     * #STALL_SECONDS} s (a stall), never for slowness: a fixed bound on each wait failed on a saturated 2-core
     * machine, where the pair's event loops got about 1 % of a core each.
     */
    private Completion take(CompletionQueue cq) throws InterruptedException {
        long seen = -1;
        long movedAt = 0;
        for (;;) {
            Completion c = cq.take(1, TimeUnit.SECONDS);
            if (c != null) {
                return c;
            }
            long now = current.messages.get();
            if (now != seen) {
                seen = now;
                movedAt = System.nanoTime();
            } else if (System.nanoTime() - movedAt > TimeUnit.SECONDS.toNanos(STALL_SECONDS)) {
                fail("no completion, and no message moved for " + STALL_SECONDS + " s after " + now + " messages");
            }
        }
    }

    private static byte[] bytes(ByteBuf b, int index, int length) {
        byte[] a = new byte[length];
        b.getBytes(index, a);
        return a;
    }

    @ParameterizedTest(name = "unordered arrival {0}")
    @ValueSource(booleans = {false, true})
    void writeReadSendAtEverySize(boolean unordered) throws Exception {
        // a reorder window of 64 messages (the shuffler holds 8 at most) wraps 23 times in the 1 MiB Write and Send
        // alone, with chunks held across the wrap; 16 MiB would add nothing the adaptation does (11,882 messages
        // per operation, each several buffers that paranoid leak tracking records at every access: an event loop
        // given 1 % of a core on a saturated machine spends minutes on each; and there, in the 16 MiB Read, the
        // in-memory pair itself stalled: the server's LocalChannel held 2,507 unread messages with no read pending,
        // twice at the same message count, in order and shuffled)
        SctpPair c = pair(SctpPair.settings().reorderWindow(REORDER_WINDOW, SctpSettings.DEFAULT_REORDER_BYTES)
                .build(), unordered);
        LlpParameters p = c.client.connectionParameters();
        assertEquals("SCTP", p.framingName());
        SctpAdaptation a = p.framing(SctpAdaptation.class);
        assertEquals(SctpIndication.RDMA_AND_NEGOTIATION, a.peer());
        int mulpdu = p.mulpdu();
        assertEquals(1412, mulpdu, "§9.3: 1432 - 20");
        long wr = 0;
        for (int size : new int[] {0, 1, mulpdu - 1, mulpdu, mulpdu + 1, 1 << 20}) {
            int n = Math.max(size, 1);
            MemoryRegion src = c.cpd.register(buffer(n, size), Access.LOCAL_WRITE);
            MemoryRegion target = c.spd.register(buffer(n, 0), Access.REMOTE_WRITE, Access.REMOTE_READ,
                    Access.LOCAL_WRITE);
            c.client.postSend(SendRequest.rdmaWrite(++wr, src.slice(0, size), target.stag(), target.iova()));
            assertTrue(take(c.clientSend).isSuccess());
            MemoryRegion sink = c.cpd.register(buffer(n, 0), Access.LOCAL_WRITE);
            c.client.postSend(SendRequest.rdmaRead(++wr, sink.slice(0, size), target.stag(), target.iova()));
            Completion read = take(c.clientSend);
            assertTrue(read.isSuccess(), read::toString);
            assertArrayEquals(bytes(src.memory(), 0, size), bytes(sink.memory(), 0, size), "Write then Read of " + size);
            MemoryRegion recv = c.spd.register(buffer(n, 0), Access.LOCAL_WRITE);
            c.server.postRecv(RecvRequest.of(size, recv.slice(0, size)));
            c.client.postSend(SendRequest.send(++wr, src.slice(0, size)));
            assertTrue(take(c.clientSend).isSuccess());
            Completion r = take(c.serverRecv);
            assertEquals(size, r.byteLength());
            assertArrayEquals(bytes(src.memory(), 0, size), bytes(recv.memory(), 0, size), "Send of " + size);
            for (MemoryRegion mr : List.of(src, target, sink, recv)) {
                mr.deregister();
            }
        }
        if (unordered) {
            assertTrue(c.reordered.get() > 0, "messages were delivered out of order");
            long aws = serverCumulativeAws(c.serverChannel);
            assertTrue(aws > 2 * REORDER_WINDOW, "the server's reorder window wrapped: cumulative AWS " + aws);
        }
    }

    @Test
    void sendVariantsImmediateDataAtomicsShuffled() throws Exception {
        SctpPair c = pair(true);
        MemoryRegion recv = c.spd.register(buffer(256, 0), Access.LOCAL_WRITE);
        for (int i = 0; i < 3; i++) {
            c.server.postRecv(RecvRequest.of(i, recv.slice(i * 64, 64)));
        }
        MemoryRegion invalidatable = c.spd.register(buffer(8, 0), Access.REMOTE_WRITE, Access.REMOTE_INVALIDATE);
        MemoryRegion src = c.cpd.register(buffer(64, 3), Access.LOCAL_WRITE);
        c.client.postSend(SendRequest.send(1, src.slice(0, 10)).solicited());
        c.client.postSend(SendRequest.sendWithInvalidate(2, src.slice(0, 20), invalidatable.stag()));
        c.client.postSend(SendRequest.immediateData(3, 0x1122334455667788L));
        assertTrue(take(c.serverRecv).solicited());
        assertTrue(take(c.serverRecv).hasInvalidatedStag());
        assertFalse(invalidatable.isValid());
        Completion s3 = take(c.serverRecv);
        assertEquals(WcOpcode.RECV_IMMEDIATE, s3.opcode());
        assertEquals(0x1122334455667788L, s3.immediateData());
        for (int i = 0; i < 3; i++) {
            assertTrue(take(c.clientSend).isSuccess());
        }
        MemoryRegion counter = c.spd.register(buffer(8, 0), Access.REMOTE_ATOMIC);
        counter.memory().setLong(0, 41);
        MemoryRegion result = c.cpd.register(buffer(8, 0), Access.LOCAL_WRITE);
        c.client.postSend(SendRequest.fetchAdd(4, result.all(), counter.stag(), counter.iova(), 1, 0));
        Completion f = take(c.clientSend);
        assertTrue(f.isSuccess(), f::toString);
        assertEquals(41, f.immediateData());
        assertEquals(42, counter.memory().getLong(0));
        c.client.postSend(SendRequest.compareSwap(5, result.all(), counter.stag(), counter.iova(), 42, -1, 7, -1));
        assertTrue(take(c.clientSend).isSuccess());
        assertEquals(7, counter.memory().getLong(0));
    }

    @Test
    void unregisteredStagIsTerminatedOverSctp() throws Exception {
        SctpPair c = pair(false);
        MemoryRegion target = c.spd.register(buffer(64, 0), Access.REMOTE_WRITE);
        MemoryRegion src = c.cpd.register(buffer(64, 1), Access.LOCAL_WRITE);
        MemoryRegion sink = c.cpd.register(buffer(8, 0), Access.LOCAL_WRITE);
        // the server acts on the Write only once the Read is on the wire too. Otherwise, on a loaded machine, it
        // could send its Terminate and close before the Read left: over SCTP (no half-close) the Read's send then
        // fails, the association closes with the Terminate unread, and the Read completes FATAL_ERR
        SctpPair.Gate gate = c.holdServerInput();
        c.client.postSend(SendRequest.rdmaWrite(1, src.all(), target.stag() ^ 0x100, target.iova()));
        c.client.postSend(SendRequest.rdmaRead(2, sink.all(), target.stag(), target.iova()));
        gate.awaitHeld(2);
        gate.open();
        assertTrue(take(c.clientSend).isSuccess(), "the Write completes when sent");
        assertEquals(WcStatus.REM_ACCESS_ERR, take(c.clientSend).status());
        assertEquals(new TerminateCause(1, 1, 0x00), c.client.peerTerminate().cause(), "DDP invalid STag");
        assertArrayEquals(new byte[64], zeroed(target), "nothing placed");
    }

    /**
     * The other order of {@link #unregisteredStagIsTerminatedOverSctp}, forced: the server reads the Write, sends its
     * Terminate and closes before the Read leaves. SCTP has no half-close, so the Read's send fails and the
     * association closes with the Terminate unread: the Read completes in error (FATAL_ERR, connection lost), the
     * stream ends, nothing is placed and nothing leaks.
     */
    @Test
    void readLeavingAfterThePeerClosedFailsCleanly() throws Exception {
        SctpPair c = pair(false);
        assertNotSame(c.clientChannel.eventLoop(), c.serverChannel.eventLoop(), "the server closes while the client waits");
        MemoryRegion target = c.spd.register(buffer(64, 0), Access.REMOTE_WRITE, Access.REMOTE_READ);
        MemoryRegion src = c.cpd.register(buffer(64, 1), Access.LOCAL_WRITE);
        MemoryRegion sink = c.cpd.register(buffer(64, 0), Access.LOCAL_WRITE);
        c.client.channel().eventLoop().submit(() -> {
            c.client.postSend(SendRequest.rdmaWrite(1, src.all(), target.stag() ^ 0x100, target.iova()));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (c.serverChannel.isOpen()) {
                assertTrue(System.nanoTime() < deadline, "the server did not close in 10 s");
                Thread.onSpinWait();
            }
            c.client.postSend(SendRequest.rdmaRead(2, sink.all(), target.stag(), target.iova()));
            return null;
        }).get(30, TimeUnit.SECONDS);
        assertTrue(take(c.clientSend).isSuccess(), "the Write completes when sent");
        Completion read = take(c.clientSend);
        assertEquals(WcOpcode.RDMA_READ, read.opcode());
        assertEquals(WcStatus.FATAL_ERR, read.status(), read::toString);
        assertTrue(c.clientChannel.closeFuture().await(10, TimeUnit.SECONDS), "the client's association closed");
        assertEquals(QpState.ERROR, c.client.state());
        assertArrayEquals(new byte[64], zeroed(target), "nothing placed");
        assertArrayEquals(new byte[64], zeroed(sink), "nothing read");
    }

    /** The region's content compared against what {@link #buffer} wrote with seed 0. */
    private static byte[] zeroed(MemoryRegion mr) {
        int n = mr.memory().writerIndex();
        byte[] diff = bytes(mr.memory(), 0, n);
        for (int i = 0; i < n; i++) {
            diff[i] -= (byte) (i * 7);
        }
        return diff;
    }

    @Test
    void offsetOutOfBoundsIsTerminatedAndNothingPlacedOutside() throws Exception {
        SctpPair c = pair(false);
        ByteBuf whole = buffer(256, 0);
        MemoryRegion target = c.spd.register(whole.slice(64, 64), Access.REMOTE_WRITE);
        MemoryRegion src = c.cpd.register(buffer(64, 1), Access.LOCAL_WRITE);
        c.client.postSend(SendRequest.rdmaWrite(1, src.all(), target.stag(), target.iova() + 32));
        take(c.clientSend);
        await(() -> c.client.peerTerminate() != null);
        assertEquals(1, c.client.peerTerminate().cause().layer(), "DDP");
        assertEquals(1, c.client.peerTerminate().cause().errorType(), "tagged buffer error");
        assertEquals(0x01, c.client.peerTerminate().cause().errorCode(), "base or bounds violation");
        byte[] after = bytes(whole, 0, 256);
        for (int i = 0; i < 256; i++) {
            assertEquals((byte) (i * 7), after[i], "octet " + i + " untouched");
        }
    }

    @Test
    void terminateTravelsAsANoPlacementMessage() throws Exception {
        SctpPair c = pair(true);
        MemoryRegion src = c.cpd.register(buffer(8, 1), Access.LOCAL_WRITE);
        c.client.postSend(SendRequest.rdmaWrite(1, src.all(), 0x7777_7700, 0));
        Completion write = take(c.clientSend);
        assertTrue(write.isSuccess(), write::toString);
        await(() -> c.client.peerTerminate() != null, () -> "no Terminate; client " + c.client.state() + (
                c.clientChannel.isOpen() ? " open" : " closed") + ", server " + c.server.state() + (
                c.serverChannel.isOpen() ? " open" : " closed"));
        assertEquals(new TerminateCause(1, 1, 0x00), c.client.peerTerminate().cause());
        c.client.close().await(5, TimeUnit.SECONDS);
        assertEquals(QpState.ERROR, c.client.state());
    }

    /** Runs {@code message} into the server's pipeline below the shim, on its event loop. */
    private static void inject(Channel ch, Callable<SctpMessage> message) throws Exception {
        ch.eventLoop().submit(() -> {
            ch.pipeline().context(SctpShim.COMPLETION).fireChannelRead(message.call());
            return null;
        }).get(5, TimeUnit.SECONDS);
    }

    private static long serverCumulativeAws(Channel ch) throws Exception {
        return ch.eventLoop().submit(() -> ch.pipeline().get(AwsSequencer.class).cumulativeAws()).get();
    }

    /** Extension ‖ tagged DDP header ‖ payload, as a peer's shim would send it. */
    private static SctpMessage taggedWrite(int tag, long offset, long aws, int stag, long to, int length) {
        ByteBuf b = Unpooled.buffer();
        b.writeInt(3 << 8).writeInt(tag).writeLong(offset).writeInt((int) aws);
        b.writeByte(0xC1).writeByte(0x40).writeInt(stag).writeLong(to);
        b.writeZero(length);
        return new SctpMessage(0, 0, true, b);
    }

    @Test
    void extensionDisagreeingWithTheDdpHeaderAbortsAndPlacesNothing() throws Exception {
        SctpPair c = pair(false);
        MemoryRegion target = c.spd.register(buffer(64, 0), Access.REMOTE_WRITE);
        long aws = serverCumulativeAws(c.serverChannel) + 1;
        inject(c.serverChannel, () -> taggedWrite(target.stag(), target.iova(), aws, target.stag(), target.iova() + 1, 8));
        await(() -> !c.serverChannel.isOpen());
        assertArrayEquals(new byte[64], zeroed(target), "nothing placed");
        await(() -> c.server.state() == QpState.ERROR);
    }

    @Test
    void awsFarAheadAbortsAndPlacesNothing() throws Exception {
        SctpPair c = pair(false);
        MemoryRegion target = c.spd.register(buffer(64, 0), Access.REMOTE_WRITE);
        long aws = serverCumulativeAws(c.serverChannel) + 100_000;
        inject(c.serverChannel, () -> taggedWrite(target.stag(), target.iova(), aws, target.stag(), target.iova(), 8));
        await(() -> !c.serverChannel.isOpen());
        assertArrayEquals(new byte[64], zeroed(target), "nothing placed");
        await(() -> c.server.state() == QpState.ERROR);
    }

    @Test
    void rdmaModeFromTheWrongIndicationAborts() throws Exception {
        SctpPair c = pair(false);
        long aws = serverCumulativeAws(c.serverChannel) + 1;
        inject(c.serverChannel, () -> {
            ByteBuf b = Unpooled.buffer().writeInt(1 << 8).writeInt(0).writeLong(0).writeInt((int) aws).writeZero(18);
            return new SctpMessage(0, 0, true, b); // DDP_MODE from an RDMA_AND_NEGOTIATION sender: R2
        });
        await(() -> !c.serverChannel.isOpen());
    }

    private static void await(Callable<Boolean> condition) throws Exception {
        await(condition, () -> "condition not met");
    }

    private static void await(Callable<Boolean> condition, Supplier<String> state) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.call()) {
            if (System.nanoTime() > deadline) {
                fail(state.get() + " after 10 s");
            }
            Thread.sleep(10);
        }
    }
}
