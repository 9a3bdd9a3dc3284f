package dev.iwarp.bootstrap;

import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Send or Write whose every payload octet was copied on its way down (MPA's one-buffer FPDU of at most
 * 1024 octets, or a copy per segment from a region peers may write, with CRC) completes once its writes were
 * made: its source is free, as siw's is once the payload sits in the TCP send buffer. Anything else
 * completes when the socket took its last segment. Checked with the flush held below the framer, so no
 * octet has reached the "socket" when the completion is looked for.
 */
class SourceReleasedTest {
    private MpaEnginePair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    /** Holds every flush while {@code held}; counts the flushes that reach it. */
    private static final class FlushGate extends ChannelOutboundHandlerAdapter {
        boolean held;
        int flushes;
        private boolean pending;

        @Override
        public void flush(ChannelHandlerContext ctx) {
            flushes++;
            if (held) {
                pending = true;
            } else {
                ctx.flush();
            }
        }

        void open(ChannelHandlerContext ctx) {
            held = false;
            if (pending) {
                pending = false;
                ctx.flush();
            }
        }
    }

    private FlushGate gate(MpaEnginePair.Side side) {
        FlushGate gate = new FlushGate();
        side.ch.pipeline().addFirst("gate", gate); // below the MPA framer: between it and the socket
        return gate;
    }

    @ParameterizedTest(name = "crc={0} markers={1} size={2} peers may write the source={3}: early={4}")
    @CsvSource({
            "true,  false, 1024,  false, true",   // one FPDU built whole
            "false, false, 1,     false, true",
            "false, false, 0,     false, true",
            "true,  false, 1025,  false, false",  // the region's memory goes down as is
            "true,  true,  64,    false, false",  // markers: the payload goes down as slices
            "true,  false, 20000, true,  true",   // CRC over a region peers may write: a copy per segment
            "true,  false, 1000,  true,  true",   // ... unless the one-buffer FPDU is the copy
            "false, false, 20000, true,  false"}) // no CRC: nothing is copied
    void aWriteCompletesOnceItsSourceIsFree(boolean crc, boolean markers, int size, boolean remoteWritable,
                                            boolean early) {
        pair = new MpaEnginePair(MpaSettings.builder().crc(crc).build(),
                MpaSettings.builder().crc(crc).markers(markers).acceptMarkers(true).build(), false);
        MpaEnginePair.Side a = pair.initiator;
        MpaEnginePair.Side b = pair.responder;
        ByteBuf src = a.buffer(Math.max(size, 1), 0x5A);
        MemoryRegion srcMr = remoteWritable ? a.register(src, Access.LOCAL_WRITE, Access.REMOTE_WRITE)
                : a.register(src, Access.LOCAL_WRITE);
        ByteBuf dst = b.buffer(Math.max(size, 1), 0);
        MemoryRegion dstMr = b.register(dst, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        byte[] sent = bytes(src, size);
        FlushGate gate = gate(a);
        gate.held = true;

        a.qp.postSend(SendRequest.rdmaWrite(7, srcMr.slice(0, size), dstMr.stag(), dstMr.iova()));
        a.ch.runPendingTasks();
        assertTrue(gate.flushes > 0, "the post flushed (and the gate held it)");
        assertTrue(a.ch.outboundMessages().isEmpty(), "nothing reached the socket");
        Completion c = a.sendCq.poll();
        if (!early) {
            assertNull(c, "waits for the socket");
            gate.open(a.ch.pipeline().context(gate));
            pair.pump();
            c = a.sendCq.poll();
            assertNotNull(c, "completes once the socket took it");
        } else {
            assertNotNull(c, "completes before the socket took it");
            src.setBytes(0, new byte[size]); // the application reuses its buffer at once
            gate.open(a.ch.pipeline().context(gate));
            pair.pump();
        }
        assertTrue(c.isSuccess(), c.toString());
        assertEquals(7, c.wrId());
        assertArrayEquals(sent, bytes(dst, size), "the octets posted arrived, whatever became of the source");
        assertEquals(QpState.RTS, b.qp.state(), "no CRC error: the CRC covered exactly the octets sent");
    }

    /**
     * A sender that posts its next small Write from each completion: the Writes complete as they are
     * copied, and the loop goes on writing while the channel is writable, so flushes reach the socket in
     * batches up to the high-water mark (EmbeddedChannel's 64 KiB, about 700 of these FPDUs), not once per
     * Write. Every Write arrives, in order, and completes in order, and never inside the
     * postSend that started it.
     */
    @Test
    void writesPostedFromCompletionsLeaveInBatches() {
        pair = new MpaEnginePair(MpaSettings.defaults(), MpaSettings.defaults(), false);
        MpaEnginePair.Side a = pair.initiator;
        MpaEnginePair.Side b = pair.responder;
        int writes = 5000;
        int size = 64;
        ByteBuf src = a.buffer(size, 0);
        MemoryRegion srcMr = a.register(src, Access.LOCAL_WRITE);
        ByteBuf dst = b.buffer(writes * 4, 0);
        MemoryRegion dstMr = b.register(dst, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        FlushGate counter = gate(a);
        List<Long> completed = new ArrayList<>();
        long[] next = {0};
        boolean[] inPost = {false};
        a.sendCq.setListener(c -> {
            assertTrue(c.isSuccess(), c.toString());
            assertTrue(!inPost[0], "a completion inside postSend");
            completed.add(c.wrId());
            if (next[0] < writes) {
                inPost[0] = true;
                postWrite(a, srcMr, dstMr, next[0]++);
                inPost[0] = false;
            }
        });
        a.ch.eventLoop().execute(() -> postWrite(a, srcMr, dstMr, next[0]++));
        pair.pump();

        assertEquals(writes, completed.size());
        for (int i = 0; i < writes; i++) {
            assertEquals(i, completed.get(i), "completions in submission order");
            assertEquals(i, dst.getInt(i * 4), "Write " + i + " placed");
        }
        assertTrue(counter.flushes <= writes / 100, counter.flushes + " flushes for " + writes + " Writes");
        assertEquals(QpState.RTS, b.qp.state());
    }

    /** Write {@code i}: its number at offset 0 of the source, placed at {@code 4 * i}. */
    private static void postWrite(MpaEnginePair.Side a, MemoryRegion src, MemoryRegion dst, long i) {
        src.memory().setInt(0, (int) i); // its predecessor completed: the source is free
        a.qp.postSend(SendRequest.rdmaWrite(i, src.slice(0, 4), dst.stag(), dst.iova() + 4 * i));
    }

    private static byte[] bytes(ByteBuf b, int length) {
        byte[] a = new byte[length];
        b.getBytes(0, a);
        return a;
    }
}
