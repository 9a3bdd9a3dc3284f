package dev.iwarp.bootstrap;

import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.testkit.BackToBack;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * With CRC on, the CRC of every FPDU covers exactly the octets that go on the wire, even when the
 * memory behind a Read Response (or a Write from a region peers may write) changes after the CRC was
 * computed and before the transport copied the octets: each such segment carries its own copy.
 */
class PayloadCrcConsistencyTest {
    private static final int SIZE = 256 * 1024;
    private MpaEnginePair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    /** Takes what {@code ch} has sent so far, checks the CRC of every FPDU in it, and returns the octets. */
    private static byte[] takeCheckingEveryCrc(EmbeddedChannel ch) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            out.writeBytes(ByteBufUtil.getBytes(b));
            b.release();
        }
        byte[] wire = out.toByteArray();
        int fpdus = 0;
        for (int at = 0; at < wire.length; fpdus++) {
            int length = (wire[at] & 0xFF) << 8 | wire[at + 1] & 0xFF;
            int crcAt = at + 2 + length + ((-(2 + length)) & 3);
            CRC32C crc = new CRC32C();
            crc.update(wire, at, crcAt - at);
            int sent = (wire[crcAt] & 0xFF) | (wire[crcAt + 1] & 0xFF) << 8 | (wire[crcAt + 2] & 0xFF) << 16
                    | (wire[crcAt + 3] & 0xFF) << 24;
            assertEquals((int) crc.getValue(), sent, "CRC of FPDU #" + (fpdus + 1) + " matches its octets");
            at = crcAt + 4;
        }
        assertTrue(fpdus > 0, "FPDUs were sent");
        return wire;
    }

    /**
     * Drives the pair one step at a time: after each step, the memory a peer could write is changed
     * before the FPDUs just framed leave; every FPDU must still carry a matching CRC.
     */
    private void pumpWhileChanging(ByteBuf memory) {
        for (int step = 0; step < 10_000; step++) {
            pair.initiator.ch.runPendingTasks();
            pair.responder.ch.runPendingTasks();
            memory.setByte(step % memory.capacity(), step); // lands after the CRC of what is queued was computed
            byte[] fromI = takeCheckingEveryCrcOrEmpty(pair.initiator.ch);
            byte[] fromR = takeCheckingEveryCrcOrEmpty(pair.responder.ch);
            if (fromI.length == 0 && fromR.length == 0) {
                return;
            }
            if (fromI.length > 0) {
                pair.responder.ch.writeInbound(io.netty.buffer.Unpooled.wrappedBuffer(fromI));
            }
            if (fromR.length > 0) {
                pair.initiator.ch.writeInbound(io.netty.buffer.Unpooled.wrappedBuffer(fromR));
            }
        }
        throw new AssertionError("did not settle");
    }

    private static byte[] takeCheckingEveryCrcOrEmpty(EmbeddedChannel ch) {
        return ch.outboundMessages().isEmpty() ? new byte[0] : takeCheckingEveryCrc(ch);
    }

    @Test
    void readResponseFromMemoryChangedWhileInFlight() {
        pair = new MpaEnginePair(MpaSettings.defaults(), MpaSettings.defaults());
        MemoryRegion source = pair.responder.register(pair.responder.buffer(SIZE, 0x11), Access.REMOTE_READ,
                Access.REMOTE_WRITE);
        MemoryRegion sink = pair.initiator.register(pair.initiator.buffer(SIZE, 0), Access.LOCAL_WRITE);
        pair.initiator.qp.postSend(SendRequest.rdmaRead(1, sink.all(), source.stag(), source.iova()));
        pumpWhileChanging(source.memory());
        Completion c = pair.initiator.sendCq.poll();
        assertNotNull(c);
        assertTrue(c.isSuccess(), c::toString);
    }

    @Test
    void writeFromARegionPeersMayWriteChangedWhileInFlight() {
        pair = new MpaEnginePair(MpaSettings.defaults(), MpaSettings.defaults());
        MemoryRegion source = pair.initiator.register(pair.initiator.buffer(SIZE, 0x22), Access.LOCAL_WRITE,
                Access.REMOTE_WRITE);
        MemoryRegion target = pair.responder.register(pair.responder.buffer(SIZE, 0), Access.REMOTE_WRITE);
        pair.initiator.qp.postSend(SendRequest.rdmaWrite(1, source.all(), target.stag(), target.iova()));
        pumpWhileChanging(source.memory());
        Completion c = pair.initiator.sendCq.poll();
        assertNotNull(c);
        assertTrue(c.isSuccess(), c::toString);
        assertEquals(dev.iwarp.verbs.QpState.RTS, pair.responder.qp.state(), "no CRC error at the receiver");
    }

    @Test
    void atomicResponsesWhileTheTargetChanges() {
        pair = new MpaEnginePair(MpaSettings.defaults(), MpaSettings.defaults());
        MemoryRegion target = pair.responder.register(pair.responder.buffer(64, 0), Access.REMOTE_ATOMIC,
                Access.REMOTE_WRITE);
        MemoryRegion result = pair.initiator.register(pair.initiator.buffer(8 * 16, 0), Access.LOCAL_WRITE);
        for (int i = 0; i < 16; i++) {
            pair.initiator.qp.postSend(SendRequest.fetchAdd(i, result.slice(i * 8, 8), target.stag(), target.iova(), 1, 0));
        }
        pumpWhileChanging(target.memory()); // the response carries the original value copied out under the atomic
        for (int i = 0; i < 16; i++) {
            Completion c = pair.initiator.sendCq.poll();
            assertNotNull(c);
            assertTrue(c.isSuccess(), c::toString);
        }
    }

    @Test
    void readsOverTcpWhileAnotherThreadWritesTheSource() throws Exception {
        int size = 1 << 20;
        ByteBuf sourceMemory = PooledByteBufAllocator.DEFAULT.directBuffer(size, size).writeZero(size);
        ByteBuf sinkMemory = PooledByteBufAllocator.DEFAULT.directBuffer(size, size).writeZero(size);
        AtomicBoolean stop = new AtomicBoolean();
        try (IwarpStack server = IwarpStack.builder().threads(1).build();
             IwarpStack client = IwarpStack.builder().threads(1).build()) {
            ProtectionDomain spd = server.allocPd();
            MemoryRegion source = spd.register(sourceMemory, Access.REMOTE_READ, Access.REMOTE_WRITE);
            Channel listener = server.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                    MpaSettings.builder().crc(true).build(),
                    req -> req.accept(spd, new CompletionQueue(), new CompletionQueue(), new byte[0]));
            ProtectionDomain cpd = client.allocPd();
            MemoryRegion sink = cpd.register(sinkMemory, Access.LOCAL_WRITE);
            ConnectOptions opts = ConnectOptions.of(cpd).mpa(MpaSettings.builder().crc(true).build());
            QueuePair qp = client.connect(listener.localAddress(), opts).get(10, TimeUnit.SECONDS);
            Thread writer = new Thread(() -> {
                long i = 0;
                while (!stop.get()) {
                    sourceMemory.setLong((int) (i * 8 % (size - 8)), i); // a peer's Writes, as fast as it goes
                    i++;
                }
            });
            writer.start();
            try {
                for (int i = 0; i < 20; i++) {
                    qp.postSend(SendRequest.rdmaRead(i, sink.all(), source.stag(), source.iova()));
                    Completion c = opts.sendCq().take(20, TimeUnit.SECONDS);
                    assertNotNull(c, "Read " + i + " completed");
                    assertTrue(c.isSuccess(), c + " (the client's framer checks every CRC)");
                }
            } finally {
                stop.set(true);
                writer.join();
            }
            qp.close().sync();
            listener.close().sync();
        } finally {
            sourceMemory.release();
            sinkMemory.release();
        }
    }
}
