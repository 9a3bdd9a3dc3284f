package dev.iwarp.bootstrap.tls;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.util.concurrent.PromiseNotifier;

import java.util.Arrays;

/**
 * Sits right above Netty's {@code SslHandler} and hands it the plaintext written between two flushes as the
 * buffers its wrap loop would have made of it: each {@link TlsLayer#WRAP_DATA_SIZE} octets of the stream, and the
 * rest at the flush, in one buffer each; a write alone before a flush as it is. {@code SslHandler} itself gathers
 * its queue of writes into such buffers (a copy of every octet, the payload of a registered region included), but
 * through {@code nioBuffer()} views of each write (a new NIO buffer object per FPDU's header, payload and trailer),
 * a listener object per write with a promise, and its own composites; here the same one copy goes through memory
 * addresses, and the promises of a buffer's writes become one. The records are the same: {@code SslHandler} seals
 * each buffer whole, into records of up to 2^14 octets (RFC 8446 §5.1) from its start, as before.
 *
 * <p>Whatever is held is handed down before any other message, at flush, close, disconnect and removal, and when
 * the TLS layer sends its close_notify ({@link TlsLayer#closeOutbound}). Not thread-safe: confined to the
 * channel's event loop.
 */
final class TlsWriteGatherer extends ChannelOutboundHandlerAdapter {
    private final int size;
    private final boolean direct;
    /** The one write held since the last hand-over, uncopied while it is alone. */
    private ByteBuf alone;
    /** The writes held since the last hand-over, copied, once there were two; at most {@link #size} octets. */
    private ByteBuf gathered;
    /** The real promises of the writes that end in what is held, in order. */
    private ChannelPromise[] promises = new ChannelPromise[4];
    private int promiseCount;
    private ChannelHandlerContext ctx;
    /**
     * Whether anything was written through here since the last flush. A flush with nothing new costs
     * {@code SslHandler} an empty write of its own (a promise, a wrap, an outbound entry); the stack's engine
     * flushes again after the completions of what it flushed.
     */
    private boolean written = true;

    /** {@code direct}: gather into direct memory (an engine over OpenSSL takes its input from there). */
    TlsWriteGatherer(int size, boolean direct) {
        this.size = size;
        this.direct = direct;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** Hands what is held down to the TLS handler, unflushed (before its close_notify). On the event loop. */
    void handOver() {
        if (ctx != null && !ctx.isRemoved()) {
            handOver(ctx);
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        written = true;
        if (!(msg instanceof ByteBuf)) {
            handOver(ctx);
            ctx.write(msg, promise);
            return;
        }
        ByteBuf b = (ByteBuf) msg;
        if (alone == null && gathered == null && b.readableBytes() >= size) {
            ctx.write(b, promise); // SslHandler takes it on its own, as it would
            return;
        }
        if (alone == null && gathered == null) {
            alone = b;
            hold(promise);
            return;
        }
        try {
            if (gathered == null) {
                ByteBuf first = alone;
                alone = null;
                gathered = direct ? ctx.alloc().directBuffer(size, size) : ctx.alloc().heapBuffer(size, size);
                append(ctx, first, null);
            }
        } catch (RuntimeException e) {
            b.release();
            promise.tryFailure(e);
            throw e;
        }
        append(ctx, b, promise);
    }

    /** Holds {@code promise} until what its write ends in is handed down (void: nothing to hold). */
    private void hold(ChannelPromise promise) {
        // cancelling it now would not take its octets back
        if (promise != null && !promise.isVoid() && promise.setUncancellable()) {
            if (promiseCount == promises.length) {
                promises = Arrays.copyOf(promises, promiseCount * 2);
            }
            promises[promiseCount++] = promise;
        }
    }

    /**
     * Copies {@code b}'s readable octets behind what is gathered, handing each full buffer down with the promises
     * of the writes that end in it ({@code promise}, of {@code b}'s write, among them when it ends there), and
     * releases {@code b}. {@code promise} null: {@code b}'s is held already.
     */
    private void append(ChannelHandlerContext ctx, ByteBuf b, ChannelPromise promise) {
        try {
            int index = b.readerIndex();
            int remaining = b.readableBytes();
            while (remaining > 0) {
                ByteBuf g = gathered;
                if (g == null) {
                    g = gathered = direct ? ctx.alloc().directBuffer(size, size) : ctx.alloc().heapBuffer(size, size);
                }
                int n = Math.min(remaining, g.writableBytes());
                // src.getBytes(.., dst, ..) copies between memory addresses: no NIO view of either
                b.getBytes(index, g, g.writerIndex(), n);
                g.writerIndex(g.writerIndex() + n);
                index += n;
                remaining -= n;
                if (remaining == 0) {
                    hold(promise);
                    promise = null;
                }
                if (!g.isWritable()) {
                    gathered = null;
                    ctx.write(g, promise(ctx));
                }
            }
            hold(promise); // an empty write
        } catch (RuntimeException e) {
            if (promise != null) {
                promise.tryFailure(e);
            }
            throw e;
        } finally {
            b.release();
        }
    }

    /** Hands what is held down to the TLS handler (unflushed), with the promises of the writes it ends. */
    private void handOver(ChannelHandlerContext ctx) {
        ByteBuf b = alone != null ? alone : gathered;
        if (b == null) {
            return;
        }
        alone = null;
        gathered = null;
        ctx.write(b, promise(ctx));
    }

    /** One promise for the writes held: void, the one write's, or one that completes each in order. */
    private ChannelPromise promise(ChannelHandlerContext ctx) {
        int n = promiseCount;
        promiseCount = 0;
        if (n == 0) {
            return ctx.voidPromise();
        }
        if (n == 1) {
            ChannelPromise only = promises[0];
            promises[0] = null;
            return only;
        }
        ChannelPromise[] each = Arrays.copyOf(promises, n);
        Arrays.fill(promises, 0, n, null);
        ChannelPromise all = ctx.newPromise();
        all.addListener(new PromiseNotifier<Void, ChannelFuture>(false, each));
        return all;
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (written) {
            written = false;
            handOver(ctx);
            ctx.flush();
        }
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        handOver(ctx);
        ctx.close(promise);
    }

    @Override
    public void disconnect(ChannelHandlerContext ctx, ChannelPromise promise) {
        handOver(ctx);
        ctx.disconnect(promise);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        handOver(ctx);
    }
}
