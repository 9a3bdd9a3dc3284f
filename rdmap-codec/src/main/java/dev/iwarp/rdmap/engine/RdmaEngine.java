package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ddp.DdpException;
import dev.iwarp.ddp.TaggedBufferTable;
import dev.iwarp.ddp.llp.LlpException;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.RtrMessage;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaDevice;
import dev.iwarp.verbs.RdmaObserver;
import dev.iwarp.verbs.WcStatus;
import dev.iwarp.verbs.internal.VerbsAccess;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The RDMAP engine of one stream (RFC 5040, RFC 7306), above {@link dev.iwarp.ddp.DdpCodec} and any
 * framing that honours the lower-layer contract ({@link dev.iwarp.ddp.llp}): it enters RTS on the
 * {@link LlpStartupEvent}, checks every incoming segment's RDMAP headers and hands it to the
 * {@link Responder} (Writes, Read and Atomic Requests, Sends) or the {@link Requester} (Read and
 * Atomic Responses), answers every error the peer causes with a Terminate ({@link StreamLifecycle}), and
 * lets the {@link Transmitter} write while the channel is writable.
 *
 * <p>All state is confined to the channel's event loop; {@link QueuePair} hands calls from other
 * threads to it. All parts of the engine log to this class's logger.
 */
public final class RdmaEngine extends ChannelDuplexHandler {
    static final Logger LOG = LoggerFactory.getLogger(RdmaEngine.class);
    private static final VerbsAccess VERBS = VerbsAccess.get();

    private final RdmapStream stream;
    /** How errors, the peer's Terminate, connection loss and close end the stream. */
    private final StreamLifecycle lifecycle;
    private final QueuePair qp;
    private final List<Runnable> early = new ArrayList<>();
    /** Bound to the lower layer once it is in full operation: every ULPDU reaches the engine through it. */
    private final Receiver receiver;

    public RdmaEngine(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq) {
        this.qp = VERBS.queuePair(new QueuePairCalls(this));
        this.stream = new RdmapStream(pd, sendCq, recvCq, qp);
        this.lifecycle = stream;
        TaggedBufferTable table = stream.table();
        stream.parts(new Requester(stream, stream.tx(), sendCq, table, pd),
                new Responder(stream, stream.tx(), recvCq, table, pd));
        receiver = new Receiver(stream, lifecycle, qp);
        stream.sendQueueDepth(pd.device().sendQueueDepth());
        stream.tx().readResponseRate(pd.device().readResponseRate());
    }

    /**
     * RDMA Read Responses this queue pair sends leave at {@code octetsPerSecond} at most (0: no limit; default: the
     * device's {@link RdmaDevice#readResponseRate()}). Before the stream starts.
     */
    public RdmaEngine readResponseRate(long octetsPerSecond) {
        if (octetsPerSecond < 0) {
            throw new IllegalArgumentException("read response rate " + octetsPerSecond);
        }
        stream.tx().readResponseRate(octetsPerSecond);
        return this;
    }

    /**
     * Sets this queue pair's send-queue depth (libibverbs {@code max_send_wr}; the device's
     * {@link RdmaDevice#sendQueueDepth()} unless set), before requests are posted.
     */
    public RdmaEngine sendQueueDepth(int requests) {
        if (requests < 1) {
            throw new IllegalArgumentException("send queue depth " + requests);
        }
        stream.sendQueueDepth(requests);
        return this;
    }

    public QueuePair queuePair() {
        return qp;
    }

    RdmapStream stream() {
        return stream;
    }

    Channel channel() {
        ChannelHandlerContext c = stream.ctx();
        return c == null ? null : c.channel();
    }

    Future<QueuePair> established() {
        return stream.established();
    }

    /** Attached to a pipeline and called on its event loop: work can run now, without a task. */
    boolean inEventLoop() {
        ChannelHandlerContext c = stream.ctx();
        return c != null && c.executor().inEventLoop();
    }

    /** Runs {@code task} on the event loop (at once when already there; queued until the engine is added). */
    void submit(Runnable task) {
        ChannelHandlerContext c = stream.ctx();
        if (c == null) {
            synchronized (early) {
                if (stream.ctx() == null) {
                    early.add(task);
                    return;
                }
                c = stream.ctx();
            }
        }
        if (c.executor().inEventLoop()) {
            task.run();
        } else {
            c.executor().execute(task);
        }
    }

    Future<Void> closeGracefully() {
        submit(lifecycle::closeGracefully);
        return stream.closed();
    }

    // ------------------------------------------------------------------ lifecycle

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        List<Runnable> tasks;
        RdmaObserver observer = ctx.channel().attr(RdmaObserver.KEY).get();
        if (observer != null) {
            stream.observer(observer);
        }
        synchronized (early) {
            stream.tx().attach(ctx);
            stream.attach(ctx);
            tasks = new ArrayList<>(early);
            early.clear();
        }
        tasks.forEach(Runnable::run);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof LlpStartupEvent) {
            LlpStartupEvent e = (LlpStartupEvent) evt;
            if (e.isSuccess()) {
                onEstablished(e);
            } else {
                lifecycle.toError(WcStatus.WR_FLUSH_ERR, "lower-layer startup failed: " + e.cause());
                stream.established().tryFailure(e.cause());
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void onEstablished(LlpStartupEvent e) {
        LlpParameters p = e.parameters();
        stream.establish(p, e.lowerLayer());
        if (e.lowerLayer() != null) {
            e.lowerLayer().receiveWith(receiver); // header first, then the payload where the engine says
        }
        boolean initiator = p.role() == LlpRole.INITIATOR;
        RtrMessage rtr = p.rtr();
        stream.awaitingRtr(rtr != null && !initiator); // RFC 6581: established for the ULP once the RTR arrived
        // a Send RTR takes MSN 1 of the Responder's QN 0 without a receive buffer (RFC 6581)
        stream.responder().start(p.ird(), rtr == RtrMessage.SEND && !initiator);
        stream.requester().start(p.ord(), initiator ? rtr : null);
        if (!stream.awaitingRtr()) {
            stream.established().trySuccess(qp);
        }
        LOG.debug("{} RDMAP stream in RTS: {}", stream.ctx().channel(), p);
        stream.requester().pump(true);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        stream.tx().flushPolicy().connectionClosed();
        lifecycle.toError(WcStatus.WR_FLUSH_ERR, "connection closed");
        stream.established().tryFailure(new IllegalStateException("connection closed before RTS"));
        stream.closed().trySuccess(null);
        super.channelInactive(ctx);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isWritable() && (stream.isRts() || stream.state() == QpState.CLOSING)) {
            stream.tx().transmit(true);
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof LlpException && ((LlpException) cause).streamCanCarryTerminate()) {
            LlpException e = (LlpException) cause;
            // RFC 5040 §4.7: an LLP error is reported with Layer 2 and no header (it cannot be trusted)
            lifecycle.terminate(new TerminateCause(LlpException.LAYER, e.errorType(), e.errorCode()), null, null,
                    "peer's framing: " + e.getMessage());
        } else if (cause instanceof DdpException) {
            lifecycle.terminate(TerminateMessage.forDdpException((DdpException) cause), cause.getMessage());
        } else if (cause instanceof LlpException || cause instanceof IOException) {
            // the connection was reset or lost (RFC 5044 §8 code 1 over MPA): no Terminate can go out. Logged
            // once: every write still queued fails with the same error (1,190 lines for one reset before)
            if (stream.state() != QpState.ERROR) {
                LOG.info("{} connection lost: {}", ctx.channel(), cause.getMessage());
            }
            lifecycle.toError(WcStatus.FATAL_ERR, "connection lost: " + cause.getMessage());
            ctx.close();
        } else {
            LOG.warn("{} closing after an unexpected error", ctx.channel(), cause);
            lifecycle.toError(WcStatus.FATAL_ERR, String.valueOf(cause));
            ctx.close();
        }
    }

    // ------------------------------------------------------------------ receive

    /**
     * ULPDUs reach the engine through the lower layer ({@link Receiver}), not the pipeline: what passes
     * here is someone else's.
     */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        stream.tx().flushPolicy().readComplete(); // responses and requests written while reading
        ctx.fireChannelReadComplete();
    }

    // ------------------------------------------------------------------ transmit

    /** Writes from handlers above the engine pass, except after a Terminate (RFC 5040 §6.2.2). */
    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (stream.state() == QpState.TERMINATE || stream.state() == QpState.ERROR) {
            ReferenceCountUtil.release(msg);
            promise.tryFailure(new IllegalStateException("stream terminated"));
            return;
        }
        ctx.write(msg, promise);
    }
}
