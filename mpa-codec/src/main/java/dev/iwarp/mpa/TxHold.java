package dev.iwarp.mpa;

import dev.iwarp.framing.HeldWrites;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelPromise;

/**
 * RFC 5044 §7.1.2 rule 4 for a Responder's {@link MpaFramer}: every outbound FPDU, and a flush, is held until one
 * valid FPDU was received, then handed to the framer in order. The held writes count toward the channel's
 * writability. On the event loop.
 */
final class TxHold {
    private boolean held;
    /** The writes (and a flush) held, made at the first: an idle connection that never wrote while held keeps none. */
    private HeldWrites writes;

    TxHold(boolean held) {
        this.held = held;
    }

    /** Whether outbound FPDUs are still held. */
    boolean isHeld() {
        return held;
    }

    /** Holds {@code ulpdu} (its reference passes here) with its promise. */
    void hold(ChannelHandlerContext ctx, Object ulpdu, ChannelPromise promise) {
        writes().hold(ctx, ulpdu, promise);
    }

    /** Remembers that a flush was asked for; the framer gets it after the held writes. */
    void holdFlush() {
        writes().holdFlush();
    }

    /**
     * One valid FPDU was received: nothing is held from now on, and what was goes to {@code framer} in order. Nothing
     * to do once released.
     */
    void release(ChannelOutboundHandler framer, ChannelHandlerContext ctx) {
        if (!held) {
            return;
        }
        held = false;
        HeldWrites h = writes;
        writes = null;
        if (h != null) {
            h.handOver(framer, ctx); // framed in order now that nothing is held, then the flush asked for meanwhile
        }
    }

    /** Releases what is held and fails its promises with {@code cause}: those FPDUs never leave. */
    void fail(Throwable cause) {
        if (writes != null) {
            writes.fail(cause);
        }
    }

    private HeldWrites writes() {
        if (writes == null) {
            writes = new HeldWrites();
        }
        return writes;
    }
}
