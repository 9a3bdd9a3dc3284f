package dev.iwarp.framing;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.channel.PendingWriteQueue;
import io.netty.util.ReferenceCountUtil;

/**
 * The writes a framing's startup handler holds until the framing is established (a ULPDU written before
 * the startup ended must go out framed, after the startup frames), then hands to the framer it puts in
 * its place, in order, followed by the flush that was asked for meanwhile; or fails them when the startup
 * fails. Held writes count toward the channel's writability (Netty's {@link PendingWriteQueue}), so a
 * writer that respects writability stops while the startup lasts. Nothing is allocated until a write is
 * held. Event-loop confined, as the handler that owns it.
 */
public final class HeldWrites {
    private PendingWriteQueue queue;
    private boolean flushPending;

    /** Holds {@code msg} (its reference passes here) with its promise. */
    public void hold(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (queue == null) {
            queue = new PendingWriteQueue(ctx);
        }
        queue.add(msg, promise);
    }

    /** Remembers that a flush was asked for; the framer gets it after the held writes. */
    public void holdFlush() {
        flushPending = true;
    }

    /** Whether any write is held. */
    public boolean isEmpty() {
        return queue == null || queue.isEmpty();
    }

    /**
     * Puts {@code framer} right after the startup handler of {@code startupCtx} (named {@code name} when
     * that name is free) and returns its context: the startup handler's replacement, before it removes itself.
     */
    public static ChannelHandlerContext addFramerAfter(ChannelHandlerContext startupCtx, String name,
                                                       ChannelHandler framer) {
        ChannelPipeline p = startupCtx.pipeline();
        p.addAfter(startupCtx.name(), p.get(name) == null ? name : null, framer);
        return p.context(framer);
    }

    /** Hands every held write, in order, and then the held flush to {@code framer}; holds nothing after. */
    public void handOver(ChannelOutboundHandler framer, ChannelHandlerContext framerCtx) {
        PendingWriteQueue q = queue;
        queue = null;
        if (q != null) {
            Object msg;
            while ((msg = q.current()) != null) {
                ReferenceCountUtil.retain(msg); // remove() releases the queue's reference
                ChannelPromise promise = q.remove();
                try {
                    framer.write(framerCtx, msg, promise);
                } catch (Exception e) {
                    promise.tryFailure(e);
                }
            }
        }
        if (flushPending) {
            flushPending = false;
            try {
                framer.flush(framerCtx);
            } catch (Exception e) {
                framerCtx.fireExceptionCaught(e);
            }
        }
    }

    /** Releases every held write and fails its promise with {@code cause}; holds nothing after. */
    public void fail(Throwable cause) {
        PendingWriteQueue q = queue;
        queue = null;
        flushPending = false;
        if (q != null) {
            q.removeAndFailAll(cause);
        }
    }
}
