package dev.iwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;

import java.util.Arrays;

/**
 * Consecutive small FPDUs ({@link FpduWriter#writeSmallFpdu}) appended into one buffer that leaves as one
 * outbound entry: per small FPDU, a buffer allocation and an outbound-buffer entry (its creation, the pipeline
 * walk of its write, its removal once sent) cost the sending loop more than building the FPDU does. The octets
 * are those the FPDUs would have been one by one, in the same order.
 *
 * <p>A batch ends (is written below the framer) when it is full ({@link #MAX_OCTETS}) and, through {@link #end},
 * before any other write passes the framer, at flush, close (a TCP channel's disconnect is a close), when the
 * channel goes inactive and when the framer is removed: nothing stays open on an idle connection, and nothing is
 * held back past a flush. An FPDU written with a real promise joins the batch like any other: its promise
 * completes when the batch was written (so once every earlier FPDU was written too), as it would have on its own
 * at the same flush. A Read Response carries such a promise (its IRD slot frees once it was written), so a
 * batch that ended at each real promise gave a burst of small Read Responses one buffer and one entry each.
 * Not thread-safe: confined to the framer's event loop.
 */
final class FpduBatch {
    /**
     * Octets of a batch, at the most. Bounds what the framer holds outside the channel's outbound buffer (which
     * alone counts toward writability) to one such buffer per connection; 16 KiB is 15 FPDUs of 1 KiB, enough
     * to make the per-entry cost small next to the per-octet cost, and stays in the allocator's small, cached
     * size classes (Netty's pooled and adaptive allocators both serve it from per-thread caches or chunks).
     */
    static final int MAX_OCTETS = 16 * 1024;

    private static final ChannelPromise[] NO_PROMISES = {};
    private ByteBuf buf;
    /** Whether {@link #buf} holds an FPDU written with a void promise (its failure must reach exceptionCaught). */
    private boolean holdsVoidWrites;
    /**
     * Capacity of the next batch, at the least. A batch is never grown (that would copy it): an FPDU that does
     * not fit ends it, and the next one is twice as large, up to {@link #MAX_OCTETS}, as TCP's slow start; a
     * batch ended with less than half of it used halves it. So a ping-pong's batch is one FPDU, a stream's
     * batches are full, and a stalled connection's outbound buffer holds little unused capacity per octet.
     */
    private int nextCapacity;
    /**
     * The real promises of the FPDUs in {@link #buf}, in order; at most one per FPDU, so bounded by the batch. Empty
     * until an FPDU with a real promise joins a batch (an idle connection holds none).
     */
    private ChannelPromise[] promises = NO_PROMISES;
    private int promiseCount;
    /** Completes the promises of the batches written with more than one (one listener for all of them). */
    private final BatchPromises written = new BatchPromises();

    /**
     * Appends an FPDU of {@code length} octets from {@code fpdu} followed by the CRC field {@code crcField}
     * (RFC 5044 §4.4: little-endian; 0 when unused). {@code promise} completes when the batch was written.
     */
    void append(ChannelHandlerContext ctx, byte[] fpdu, int length, int crcField, ChannelPromise promise) {
        int wire = length + MpaFramer.CRC_LENGTH;
        ByteBuf b = buf;
        if (b != null && b.writableBytes() < wire) {
            int grown = Math.min(MAX_OCTETS, b.capacity() * 2);
            end(ctx);
            nextCapacity = grown;
            b = null;
        }
        if (b == null) {
            int capacity = Math.max(wire, nextCapacity);
            b = buf = ctx.alloc().buffer(capacity, capacity);
        }
        b.writeBytes(fpdu, 0, length).writeIntLE(crcField);
        // a promise cancelled (or done) before its write: the FPDU still leaves, as the stream's next FPDU
        // (the peer's DDP counts on it), and the promise stays as it is
        if (promise.isVoid() || promise.isDone() || !promise.setUncancellable()) {
            holdsVoidWrites = true;
            return;
        }
        if (promiseCount == promises.length) {
            promises = Arrays.copyOf(promises, Math.max(4, promiseCount * 2));
        }
        promises[promiseCount++] = promise;
    }

    /** Writes the open batch, if any, below the framer, with the promises of its FPDUs. */
    void end(ChannelHandlerContext ctx) {
        if (buf != null) {
            write(ctx, batchPromise(ctx));
        }
    }

    /**
     * One promise for the whole batch: void, its one FPDU's, or one whose completion completes each FPDU's in order
     * ({@link BatchPromises}).
     */
    private ChannelPromise batchPromise(ChannelHandlerContext ctx) {
        int n = promiseCount;
        if (n == 0) {
            return ctx.voidPromise();
        }
        ChannelPromise[] p = promises;
        promiseCount = 0;
        if (n == 1) {
            ChannelPromise only = p[0];
            p[0] = null;
            return only;
        }
        ChannelPromise all = ctx.newPromise();
        written.add(all, p, n);
        all.addListener(written);
        return all;
    }

    private void write(ChannelHandlerContext ctx, ChannelPromise promise) {
        ByteBuf b = buf;
        buf = null;
        nextCapacity = b.readableBytes() * 2 < b.capacity() ? b.capacity() / 2 : b.capacity();
        if (holdsVoidWrites && !promise.isVoid()) {
            // each FPDU written with a void promise reported its failure through exceptionCaught: so does the batch
            promise.addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
        }
        holdsVoidWrites = false;
        ctx.write(b, promise);
    }
}
