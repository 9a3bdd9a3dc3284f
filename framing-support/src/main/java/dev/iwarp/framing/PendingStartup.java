package dev.iwarp.framing;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelPromise;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;

import java.nio.channels.ClosedChannelException;
import java.util.concurrent.TimeUnit;

/**
 * What waits on a framing's startup until it ends, for the startup handler that owns it: the promise its
 * startup future completes, the startup timer, and the ULPDUs written meanwhile ({@link HeldWrites}), handed
 * to the framer once the startup succeeded and failed with the startup otherwise. Each end also fires the
 * framing's completion event. Event-loop confined, as the handler that owns it.
 *
 * @param <P> the parameters a successful startup negotiated
 */
public final class PendingStartup<P> {
    private final Promise<P> promise;
    private final HeldWrites held = new HeldWrites();
    private ScheduledFuture<?> timer;

    /** For the startup handler of {@code ctx}, once it is in a pipeline. */
    public PendingStartup(ChannelHandlerContext ctx) {
        promise = ctx.executor().newPromise();
    }

    /**
     * The startup future of a handler whose {@code pending} is set once it is in a pipeline: completes with the
     * negotiated parameters, or fails with the startup's failure.
     *
     * @throws IllegalStateException while {@code pending} is null
     */
    public static <P> Future<P> futureOf(PendingStartup<P> pending) {
        if (pending == null) {
            throw new IllegalStateException("not added to a pipeline yet");
        }
        return pending.promise;
    }

    /** Runs {@code onTimeout} on the event loop after {@code millis} unless {@link #stopTimer()} comes first. */
    public void startTimer(ChannelHandlerContext ctx, long millis, Runnable onTimeout) {
        timer = ctx.executor().schedule(onTimeout, millis, TimeUnit.MILLISECONDS);
    }

    public void stopTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    /** Holds a ULPDU written before the startup ended (its reference passes here); it counts toward writability. */
    public void hold(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        held.hold(ctx, msg, promise);
    }

    /** Remembers a flush asked for before the startup ended; the framer gets it after the held writes. */
    public void holdFlush() {
        held.holdFlush();
    }

    /**
     * The startup succeeded with {@code params}: the promise completes, {@code event} fires from {@code ctx}, and
     * the held ULPDUs, then the held flush, go to {@code framer} (at {@code framerCtx}), in order.
     */
    public void succeeded(ChannelHandlerContext ctx, P params, Object event, ChannelOutboundHandler framer,
                          ChannelHandlerContext framerCtx) {
        promise.trySuccess(params);
        ctx.fireUserEventTriggered(event);
        held.handOver(framer, framerCtx);
    }

    /**
     * The startup failed (or was rejected): the held ULPDUs fail with {@code cause}, then the promise;
     * {@code event} fires from {@code ctx}.
     */
    public void failed(ChannelHandlerContext ctx, Throwable cause, Object event) {
        held.fail(cause);
        promise.tryFailure(cause);
        ctx.fireUserEventTriggered(event);
    }

    /** The startup handler left the pipeline: no timer, and whatever is still held fails. */
    public void abandon() {
        stopTimer();
        held.fail(new ClosedChannelException());
    }
}
