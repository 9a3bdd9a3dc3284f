package dev.iwarp.mpa;

import dev.iwarp.testkit.ChannelOctets;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Consecutive small FPDUs ({@link MpaFramer#writeUlpdu} with a payload the framer copies) leave as one buffer
 * and one outbound entry until a flush, another write or a full batch ends them; the octets on
 * the wire are exactly those of the FPDUs one by one (checked against {@link MpaTestUtil.ReferenceSender},
 * written from RFC 5044 §4 on plain arrays).
 */
class MpaFramerBatchTest {
    /** Octets of a batch at the most (the framer's bound on what it holds outside the outbound buffer). */
    private static final int BATCH = 16 * 1024;

    /**
     * N small ULPDUs written with void promises (or each with its own promise, as Read Responses are), then one
     * flush: the outbound entries and the buffers allocated. One of each per FPDU before batching (256 and 256 for
     * N = 256); now one of each per batch: 21 for N = 256 1 KiB payloads (batches of 1, 2, 4, 8, then 15 FPDUs: a
     * batch is never grown, the next is twice as large). Every real promise completes at the flush.
     */
    @ParameterizedTest
    @CsvSource({"true, 1024, 256, false", "false, 1024, 256, false", "true, 64, 256, false", "true, 0, 64, false",
            "true, 1024, 256, true", "true, 64, 256, true"})
    void aFlushedBurstOfSmallFpdusLeavesInFewBuffers(boolean crc, int payloadLength, int n, boolean realPromises) {
        CountingAllocator alloc = new CountingAllocator();
        MpaFramer framer = new MpaFramer(crc, false, false, 0xFFFF, 64768, false);
        EmbeddedChannel tx = new EmbeddedChannel();
        tx.config().setAllocator(alloc);
        tx.pipeline().addLast(framer);
        MpaTestUtil.ReferenceSender reference = new MpaTestUtil.ReferenceSender(false, crc);
        Random rnd = new Random(payloadLength + n);
        ByteBuf header = Unpooled.buffer(18);
        List<ChannelPromise> promises = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ChannelPromise promise = realPromises ? tx.newPromise() : tx.voidPromise();
            if (realPromises) {
                promises.add(promise);
            }
            byte[] ulpdu = writeOne(framer, header, rnd, 18, payloadLength, promise);
            reference.emit(ulpdu);
        }
        assertTrue(promises.stream().noneMatch(ChannelPromise::isDone), "no promise completes before the flush");
        tx.flush();
        assertTrue(promises.stream().allMatch(ChannelPromise::isSuccess), "every promise completes at the flush");
        int wire = wire(18 + payloadLength);
        List<ByteBuf> out = drainBuffers(tx);
        int entries = out.size();
        int buffers = alloc.buffers();
        long octets = alloc.octets();
        System.out.printf("batch: crc %s payload %d: %d ULPDUs -> %d outbound entries, %d buffers allocated,"
                + " %d octets of capacity (%.1f per ULPDU of %d wire octets)%n", crc, payloadLength, n, entries,
                buffers, octets, (double) octets / n, wire);
        assertArrayEquals(reference.bytes(), concat(out), "the octets of the FPDUs one by one");
        int perFullBatch = BATCH / wire;
        int full = (n + perFullBatch - 1) / perFullBatch;
        int doubling = 32 - Integer.numberOfLeadingZeros(perFullBatch); // batches of 1, 2, 4, ... FPDUs first
        assertTrue(entries <= full + doubling, entries + " entries for " + n + " FPDUs of " + wire
                + " octets: at most " + full + " full batches and the " + doubling + " doubling ones before them");
        assertEquals(entries, buffers, "one buffer allocated per outbound entry, none per FPDU");
        assertTrue(octets <= (long) n * wire * 2, "capacity allocated at most twice the octets sent: " + octets);
        assertFalse(tx.finish());
    }

    /** Flushed after every write (ping-pong): one FPDU, one buffer, one entry each, as before batching. */
    @Test
    void aFlushAfterEachWriteSendsEachFpduAtOnce() {
        CountingAllocator alloc = new CountingAllocator();
        MpaFramer framer = new MpaFramer(true, false, false, 0xFFFF, 64768, false);
        EmbeddedChannel tx = new EmbeddedChannel();
        tx.config().setAllocator(alloc);
        tx.pipeline().addLast(framer);
        Random rnd = new Random(3);
        ByteBuf header = Unpooled.buffer(18);
        for (int i = 0; i < 20; i++) {
            MpaTestUtil.ReferenceSender one = new MpaTestUtil.ReferenceSender(false, true);
            one.emit(writeOne(framer, header, rnd, 18, 64, tx.voidPromise()));
            tx.flush();
            List<ByteBuf> out = drainBuffers(tx);
            assertEquals(1, out.size(), "nothing is held past a flush");
            assertEquals(wire(18 + 64), out.get(0).readableBytes());
            assertArrayEquals(one.bytes(), concat(out));
        }
        assertEquals(20, alloc.buffers());
        assertEquals(20L * wire(18 + 64), alloc.octets(), "a ping-pong's batch is the FPDU's size");
        assertFalse(tx.finish());
    }

    /**
     * Known answer over batch boundaries: ULPDUs of many sizes (small ones batched, larger ones written as
     * header, payload and trailer in between), with random flushes and real promises, CRC on and off. The wire
     * equals the reference; each outbound buffer holds whole FPDUs and at most {@value #BATCH} octets; every
     * promise succeeds.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void batchedOctetsEqualTheFpdusOneByOne(boolean crc) {
        MpaFramer framer = new MpaFramer(crc, false, false, 0xFFFF, 64768, false);
        EmbeddedChannel tx = new EmbeddedChannel(framer);
        MpaTestUtil.ReferenceSender reference = new MpaTestUtil.ReferenceSender(false, crc);
        Random rnd = new Random(crc ? 11 : 12);
        ByteBuf header = Unpooled.buffer(64);
        List<ChannelPromise> promises = new ArrayList<>();
        List<Integer> pieceEnds = new ArrayList<>(); // offsets at which an FPDU, or a piece of a large one, ends
        int offset = 0;
        for (int i = 0; i < 600; i++) {
            int headerLength = rnd.nextInt(10) == 0 ? 28 : (rnd.nextBoolean() ? 14 : 18);
            int r = rnd.nextInt(20);
            int payloadLength = r == 0 ? FpduWriter.SMALL_PAYLOAD + rnd.nextInt(3000) : r < 3 ? rnd.nextInt(4)
                    : rnd.nextInt(FpduWriter.SMALL_PAYLOAD + 1);
            ChannelPromise promise = rnd.nextInt(25) == 0 ? tx.newPromise() : tx.voidPromise();
            if (!promise.isVoid()) {
                promises.add(promise);
            }
            reference.emit(writeOne(framer, header, rnd, headerLength, payloadLength, promise));
            if (payloadLength > FpduWriter.SMALL_PAYLOAD) { // header, payload, trailer
                pieceEnds.add(offset + MpaFramer.LENGTH_FIELD + headerLength);
                pieceEnds.add(offset + MpaFramer.LENGTH_FIELD + headerLength + payloadLength);
            }
            offset += wire(headerLength + payloadLength);
            pieceEnds.add(offset);
            if (rnd.nextInt(40) == 0) {
                tx.flush();
            }
        }
        tx.flush();
        List<ByteBuf> out = drainBuffers(tx);
        int at = 0;
        for (ByteBuf b : out) {
            assertTrue(b.readableBytes() <= BATCH, "a buffer of " + b.readableBytes() + " octets");
            at += b.readableBytes();
            assertTrue(pieceEnds.contains(at), "a batch ends at an FPDU's end: " + at);
        }
        assertArrayEquals(reference.bytes(), concat(out));
        for (ChannelPromise p : promises) {
            assertTrue(p.isSuccess());
        }
        // one FPDU in 20 is large (three entries), one write in 25 has a real promise, one in 40 is followed by a flush
        assertTrue(out.size() < 600 / 2, out.size() + " outbound entries for 600 FPDUs");

        EmbeddedChannel rx = new EmbeddedChannel(new MpaFramer(crc, false, false, 0xFFFF, 1454, false));
        rx.writeInbound(Unpooled.wrappedBuffer(reference.bytes()));
        assertEquals(600, ChannelOctets.drainInbound(rx).size(), "every FPDU decodes");
        assertFalse(rx.finish());
        assertFalse(tx.finish());
    }

    /**
     * A real promise joins the batch and completes when the batch was written, not before; the FPDUs after it
     * join the same batch. Another write passing the framer (here an object it does not frame) first sends the
     * open batch: order on the wire is the order of the writes.
     */
    @Test
    void aRealPromiseJoinsTheBatchAndOtherWritesEndIt() {
        MpaFramer framer = new MpaFramer(true, false, false, 0xFFFF, 64768, false);
        EmbeddedChannel tx = new EmbeddedChannel(framer);
        Random rnd = new Random(5);
        ByteBuf header = Unpooled.buffer(18);
        for (int i = 0; i < 100; i++) { // a burst first: batches after it hold several FPDUs of this size
            writeOne(framer, header, rnd, 18, 100, tx.voidPromise());
        }
        tx.flush();
        concat(drainBuffers(tx));
        MpaTestUtil.ReferenceSender first = new MpaTestUtil.ReferenceSender(false, true);
        for (int i = 0; i < 3; i++) {
            first.emit(writeOne(framer, header, rnd, 18, 100, tx.voidPromise()));
        }
        ChannelPromise promise = tx.newPromise();
        first.emit(writeOne(framer, header, rnd, 18, 100, promise));
        assertFalse(promise.isDone(), "completes once written to the socket, at the flush");
        first.emit(writeOne(framer, header, rnd, 18, 100, tx.voidPromise()));
        Object marker = new Object();
        tx.write(marker);
        assertFalse(promise.isDone(), "written below the framer, not yet flushed to the socket");
        writeOne(framer, header, rnd, 18, 100, tx.voidPromise());
        tx.flush();
        assertTrue(promise.isSuccess());
        ByteBuf batch = tx.readOutbound();
        assertArrayEquals(first.bytes(), ChannelOctets.bytes(batch), "five FPDUs, the promise's fourth");
        batch.release();
        assertSame(marker, tx.readOutbound());
        ByteBuf third = tx.readOutbound();
        assertEquals(wire(118), third.readableBytes());
        third.release();
        assertFalse(tx.finish());
    }

    /**
     * A failed write of FPDUs written with void promises still reaches exceptionCaught, and a real promise that
     * ends such a batch fails too.
     */
    @Test
    void aFailedWriteOfVoidFpdusReachesExceptionCaught() {
        MpaFramer framer = new MpaFramer(true, false, false, 0xFFFF, 64768, false);
        List<Throwable> caught = new ArrayList<>();
        EmbeddedChannel tx = new EmbeddedChannel(new ChannelOutboundHandlerAdapter() {
            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                ReferenceCountUtil.release(msg);
                promise.setFailure(new IOException("broken pipe"));
            }
        }, framer, new ChannelInboundHandlerAdapter() {
            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                caught.add(cause);
            }
        });
        Random rnd = new Random(9);
        ByteBuf header = Unpooled.buffer(18);
        writeOne(framer, header, rnd, 18, 10, tx.voidPromise());
        writeOne(framer, header, rnd, 18, 10, tx.voidPromise());
        tx.flush();
        assertFalse(caught.isEmpty(), "the void writes' failure reached exceptionCaught");
        assertTrue(caught.get(0) instanceof IOException);
        caught.clear();
        writeOne(framer, header, rnd, 18, 10, tx.voidPromise());
        ChannelPromise promise = tx.newPromise();
        writeOne(framer, header, rnd, 18, 10, promise);
        ChannelPromise another = tx.newPromise();
        writeOne(framer, header, rnd, 18, 10, another);
        tx.flush();
        assertTrue(promise.cause() instanceof IOException, "the real promise fails");
        assertTrue(another.cause() instanceof IOException, "and so does the other one in the same batch");
        assertFalse(caught.isEmpty(), "and so does the void write before it, through exceptionCaught");
        assertFalse(tx.finish());
    }

    /** Closing, or removing the framer, with a batch open leaks nothing (the leak detector runs at paranoid). */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void anOpenBatchIsNotLeakedOnCloseOrRemoval(boolean close) {
        MpaFramer framer = new MpaFramer(true, false, false, 0xFFFF, 64768, false);
        List<Throwable> caught = new ArrayList<>();
        EmbeddedChannel tx = new EmbeddedChannel(framer, new ChannelInboundHandlerAdapter() {
            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                caught.add(cause); // the close fails the unflushed void writes, as before batching
            }
        });
        Random rnd = new Random(13);
        ByteBuf header = Unpooled.buffer(18);
        MpaTestUtil.ReferenceSender reference = new MpaTestUtil.ReferenceSender(false, true);
        for (int i = 0; i < 5; i++) {
            reference.emit(writeOne(framer, header, rnd, 18, 300, tx.voidPromise()));
        }
        if (close) {
            tx.close();
            assertEquals(0, drainBuffers(tx).size(), "unflushed writes are dropped by the close, as before");
        } else {
            tx.pipeline().remove(framer);
            tx.flush();
            assertArrayEquals(reference.bytes(), concat(drainBuffers(tx)), "what was written leaves in order");
        }
        assertFalse(tx.finish());
    }

    /**
     * The graceful close (RFC 5040 §6.2.1: a FIN after the last complete FPDU) sends an open batch first: a
     * Terminate written just before it is on the wire before the channel closes.
     */
    @Test
    void closeAfterFlushSendsTheOpenBatchFirst() {
        MpaFramer framer = new MpaFramer(false, false, false, 0xFFFF, 64768, false);
        EmbeddedChannel tx = new EmbeddedChannel(framer);
        Random rnd = new Random(17);
        ByteBuf header = Unpooled.buffer(18);
        MpaTestUtil.ReferenceSender reference = new MpaTestUtil.ReferenceSender(false, false);
        for (int i = 0; i < 3; i++) {
            reference.emit(writeOne(framer, header, rnd, 18, 28, tx.voidPromise()));
        }
        framer.closeAfterFlush();
        tx.runPendingTasks();
        assertFalse(tx.isOpen(), "closed once what was written is on the wire");
        assertArrayEquals(reference.bytes(), ChannelOctets.drainOutbound(tx));
        assertFalse(tx.finish());
    }

    // ------------------------------------------------------------------ helpers

    /** Writes one ULPDU through {@link MpaFramer#writeUlpdu}; returns its octets (header then payload). */
    private static byte[] writeOne(MpaFramer framer, ByteBuf header, Random rnd, int headerLength,
                                     int payloadLength, ChannelPromise promise) {
        byte[] h = new byte[headerLength];
        byte[] p = new byte[payloadLength];
        rnd.nextBytes(h);
        rnd.nextBytes(p);
        header.clear().writeBytes(h);
        ByteBuf payload = PooledByteBufAllocator.DEFAULT.directBuffer(Math.max(1, payloadLength)).writeBytes(p);
        framer.writeUlpdu(header, payload, promise);
        byte[] ulpdu = new byte[headerLength + payloadLength];
        System.arraycopy(h, 0, ulpdu, 0, headerLength);
        System.arraycopy(p, 0, ulpdu, headerLength, payloadLength);
        return ulpdu;
    }

    /** Octets of an unmarked FPDU of a ULPDU of {@code ulpduLength} octets (RFC 5044 §4.1). */
    private static int wire(int ulpduLength) {
        return MpaFramer.wireLength(0, ulpduLength, false);
    }

    private static List<ByteBuf> drainBuffers(EmbeddedChannel ch) {
        List<ByteBuf> list = new ArrayList<>();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            list.add((ByteBuf) o);
        }
        return list;
    }

    /** The octets of {@code buffers}, in order; releases them. */
    private static byte[] concat(List<ByteBuf> buffers) {
        ByteBuf all = Unpooled.buffer();
        for (ByteBuf b : buffers) {
            all.writeBytes(b, b.readerIndex(), b.readableBytes());
            b.release();
        }
        return ChannelOctets.bytes(all);
    }
}
