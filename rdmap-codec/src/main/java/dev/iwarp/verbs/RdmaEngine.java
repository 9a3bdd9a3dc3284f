package dev.iwarp.verbs;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ddp.DdpException;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.ddp.MemoryRefusedException;
import dev.iwarp.ddp.llp.LlpException;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.RtrMessage;
import dev.iwarp.rdmap.RdmapError;
import dev.iwarp.rdmap.RdmapException;
import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.rdmap.ReadRequestHeader;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandler;
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
 * Atomic Responses), answers every error the peer causes with a Terminate ({@link StreamState}), and
 * lets the {@link Transmitter} write while the channel is writable.
 *
 * <p>All state is confined to the channel's event loop; {@link QueuePair} hands calls from other
 * threads to it. All parts of the engine log to this class's logger.
 */
public final class RdmaEngine extends ChannelDuplexHandler {
    static final Logger LOG = LoggerFactory.getLogger(RdmaEngine.class);

    private final StreamState stream;
    private final QueuePair qp;
    private final List<Runnable> early = new ArrayList<>();
    /** ULPDUs arrive as buffers, their headers unread ({@link DdpCodec#passUlpdusUp()}). */
    private boolean ulpdusArrive;
    /** The untagged segment being received. */
    private final InboundUntagged untagged = new InboundUntagged();

    public RdmaEngine(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq) {
        this.qp = new QueuePair(this);
        this.stream = new StreamState(pd, sendCq, recvCq, qp);
        stream.requester = new Requester(stream);
        stream.responder = new Responder(stream);
        stream.sendQueueDepth = pd.device().sendQueueDepth();
        stream.tx.readResponseRate(pd.device().readResponseRate());
    }

    /**
     * RDMA Read Responses this queue pair sends leave at {@code octetsPerSecond} at most (0: no limit; default: the
     * device's {@link RdmaDevice#readResponseRate()}). Before the stream starts.
     */
    public RdmaEngine readResponseRate(long octetsPerSecond) {
        if (octetsPerSecond < 0) {
            throw new IllegalArgumentException("read response rate " + octetsPerSecond);
        }
        stream.tx.readResponseRate(octetsPerSecond);
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
        stream.sendQueueDepth = requests;
        return this;
    }

    public QueuePair queuePair() {
        return qp;
    }

    StreamState stream() {
        return stream;
    }

    Channel channel() {
        ChannelHandlerContext c = stream.ctx;
        return c == null ? null : c.channel();
    }

    Future<QueuePair> established() {
        return stream.established;
    }

    /** Runs {@code task} on the event loop (at once when already there; queued until the engine is added). */
    /** Attached to a pipeline and called on its event loop: work can run now, without a task. */
    boolean inEventLoop() {
        ChannelHandlerContext c = stream.ctx;
        return c != null && c.executor().inEventLoop();
    }

    void submit(Runnable task) {
        ChannelHandlerContext c = stream.ctx;
        if (c == null) {
            synchronized (early) {
                if (stream.ctx == null) {
                    early.add(task);
                    return;
                }
                c = stream.ctx;
            }
        }
        if (c.executor().inEventLoop()) {
            task.run();
        } else {
            c.executor().execute(task);
        }
    }

    Future<Void> closeGracefully() {
        submit(stream::closeGracefully);
        return stream.closed;
    }

    // ------------------------------------------------------------------ lifecycle

    /**
     * Asks the {@link DdpCodec} below to pass ULPDUs up undecoded when no inbound handler sits between it
     * and this engine: nothing else then expects segments there.
     */
    private static boolean readHeadersInPlace(ChannelHandlerContext ctx) {
        ChannelHandlerContext codec = ctx.pipeline().context(DdpCodec.class);
        if (codec == null || !DdpCodec.onlyCodecBetween(codec, ctx, ChannelInboundHandler.class)) {
            return false; // a handler there may look at segments: they stay segments
        }
        ((DdpCodec) codec.handler()).passUlpdusUp();
        return true;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        List<Runnable> tasks;
        RdmaObserver observer = ctx.channel().attr(RdmaObserver.KEY).get();
        if (observer != null) {
            stream.observer = observer;
            stream.tx.observer = observer;
        }
        synchronized (early) {
            stream.tx.attach(ctx);
            stream.ctx = ctx;
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
                stream.toError(WcStatus.WR_FLUSH_ERR, "lower-layer startup failed: " + e.cause());
                stream.established.tryFailure(e.cause());
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void onEstablished(LlpStartupEvent e) {
        LlpParameters p = e.parameters();
        stream.establish(p, e.lowerLayer());
        ulpdusArrive = readHeadersInPlace(stream.ctx);
        if (ulpdusArrive && e.lowerLayer() != null) {
            // every ULPDU is consumed and released within its channelRead: it may be lent
            e.lowerLayer().lendsUlpdusTo(stream.ctx);
        }
        boolean initiator = p.role() == LlpRole.INITIATOR;
        RtrMessage rtr = p.rtr();
        stream.awaitingRtr = rtr != null && !initiator; // RFC 6581: established for the ULP once the RTR arrived
        // a Send RTR takes MSN 1 of the Responder's QN 0 without a receive buffer (RFC 6581)
        stream.responder.start(p.ird(), rtr == RtrMessage.SEND && !initiator);
        stream.requester.start(p.ord(), initiator ? rtr : null);
        if (!stream.awaitingRtr) {
            stream.established.trySuccess(qp);
        }
        LOG.debug("{} RDMAP stream in RTS: {}", stream.ctx.channel(), p);
        stream.requester.pump(true);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        stream.inReadBatch = false;
        stream.toError(WcStatus.WR_FLUSH_ERR, "connection closed");
        stream.established.tryFailure(new IllegalStateException("connection closed before RTS"));
        stream.closed.trySuccess(null);
        super.channelInactive(ctx);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isWritable() && (stream.isRts() || stream.state == QpState.CLOSING)) {
            stream.tx.transmit(true);
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof LlpException && ((LlpException) cause).streamCanCarryTerminate()) {
            LlpException e = (LlpException) cause;
            // RFC 5040 §4.7: an LLP error is reported with Layer 2 and no header (it cannot be trusted)
            stream.terminate(new TerminateCause(LlpException.LAYER, e.errorType(), e.errorCode()), null, null,
                    "peer's framing: " + e.getMessage());
        } else if (cause instanceof DdpException) {
            stream.terminate(TerminateMessage.forDdpException((DdpException) cause), cause.getMessage());
        } else if (cause instanceof LlpException || cause instanceof IOException) {
            // the connection was reset or lost (RFC 5044 §8 code 1 over MPA): no Terminate can go out. Logged
            // once: every write still queued fails with the same error (issue 14: 1,190 lines for one reset)
            if (stream.state != QpState.ERROR) {
                LOG.info("{} connection lost: {}", ctx.channel(), cause.getMessage());
            }
            stream.toError(WcStatus.FATAL_ERR, "connection lost: " + cause.getMessage());
            ctx.close();
        } else {
            LOG.warn("{} closing after an unexpected error", ctx.channel(), cause);
            stream.toError(WcStatus.FATAL_ERR, String.valueOf(cause));
            ctx.close();
        }
    }

    // ------------------------------------------------------------------ receive

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        DdpSegment seg;
        ByteBuf ulpdu;
        if (msg instanceof DdpSegment) {
            seg = (DdpSegment) msg;
            ulpdu = null;
        } else if (ulpdusArrive && msg instanceof ByteBuf) { // a ULPDU, its header unread (see onEstablished)
            seg = null;
            ulpdu = (ByteBuf) msg;
        } else {
            ctx.fireChannelRead(msg);
            return;
        }
        stream.inReadBatch = true;
        int header = ulpdu == null ? 0 : ulpdu.readerIndex();
        try {
            if (stream.isRts()) { // after a Terminate nothing more is processed (RFC 5040 §6.2.2)
                if (seg != null) {
                    receive(seg);
                } else {
                    receive(ulpdu);
                }
            }
        } catch (RdmapException e) {
            terminate(e.terminateCause(), seg, ulpdu, header, e.readRequest(), e.getMessage());
        } catch (MemoryRefusedException e) {
            stream.observer.memoryRefused(ctx.channel());
            // the memory budget refused what this peer's message needs: only this stream ends, as for exhausted
            // direct memory below (RFC 5040 §7.2 Local Catastrophic Error, no header quoted)
            terminate(TerminateCause.of(RdmapError.LOCAL_CATASTROPHIC), seg, ulpdu, header, null,
                    "memory budget spent: " + e.getMessage());
        } catch (OutOfMemoryError e) {
            if (!isDirectMemory(e)) {
                throw e; // the heap: nothing here can recover from it (serve then ends the process)
            }
            // a region registered on demand found no memory (direct memory exhausted): this stream ends, the
            // others go on. RFC 5040 §7.2: Local Catastrophic Error, no header quoted (rdmap.md §7.1)
            terminate(TerminateCause.of(RdmapError.LOCAL_CATASTROPHIC), seg, ulpdu, header, null,
                    "no memory to place its message into: " + e.getMessage());
        } finally {
            untagged.clear();
            ReferenceCountUtil.release(msg);
        }
    }

    /** Whether {@code e} says direct memory ran out (Netty's own limit or the JDK's), not the heap. */
    private static boolean isDirectMemory(OutOfMemoryError e) {
        return e instanceof io.netty.util.internal.OutOfDirectMemoryError
                || String.valueOf(e.getMessage()).contains("direct buffer memory");
    }

    /** Terminates for the segment {@code seg}, or for the ULPDU whose header starts at {@code header}. */
    private void terminate(TerminateCause cause, DdpSegment seg, ByteBuf ulpdu, int header,
                           ReadRequestHeader readRequest, String what) {
        DdpSegment offending = seg != null ? seg : DdpCodec.decode(ulpdu.readerIndex(header));
        try {
            stream.terminate(cause, offending, readRequest, what);
        } finally {
            if (seg == null) {
                offending.release();
            }
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        stream.inReadBatch = false;
        ctx.flush(); // responses and requests written while reading
        stream.requester.readBatchFlushed();
        ctx.fireChannelReadComplete();
    }

    private void receive(DdpSegment seg) {
        RdmapOpcode op = stream.wire.receive(seg);
        if (stream.awaitingRtr) {
            onRtr(seg, op);
            return;
        }
        if (seg.isTagged()) {
            DdpTaggedSegment t = (DdpTaggedSegment) seg;
            onTagged(op, t.stag(), t.to(), t.isLast(), t.payload());
        } else {
            onUntagged(op, untagged.of((DdpUntaggedSegment) seg));
        }
    }

    /**
     * A segment read in place (RFC 5041 §4.2, §4.3): the checks and dispatch of {@link #receive(DdpSegment)}
     * without a segment object (issue 13). The codec below checked that the header is there.
     */
    private void receive(ByteBuf ulpdu) {
        if (stream.awaitingRtr) { // once per stream: the RTR path takes a segment
            DdpSegment seg = DdpCodec.decode(ulpdu);
            try {
                receive(seg);
            } finally {
                seg.release();
            }
            return;
        }
        int at = ulpdu.readerIndex();
        int control = ulpdu.getUnsignedByte(at);
        int version = control & DdpSegment.VERSION_MASK;
        int rsvdUlp = ulpdu.getUnsignedByte(at + 1);
        if ((control & DdpSegment.FLAG_TAGGED) == 0) {
            InboundUntagged u = untagged.read(ulpdu);
            onUntagged(stream.wire.receiveUntagged(version, rsvdUlp, u.qn), u);
            return;
        }
        RdmapOpcode op = stream.wire.receiveTagged(version, rsvdUlp);
        int stag = DdpTaggedSegment.stag(ulpdu, at);
        long to = DdpTaggedSegment.to(ulpdu, at);
        onTagged(op, stag, to, (control & DdpSegment.FLAG_LAST) != 0,
                ulpdu.readerIndex(at + DdpTaggedSegment.HEADER_LENGTH));
    }

    private void onTagged(RdmapOpcode op, int stag, long to, boolean last, ByteBuf payload) {
        if (stream.observer != RdmaObserver.NONE) {
            stream.observer.transferred(stream.ctx.channel(), true, op, payload.readableBytes(), last);
        }
        if (op == RdmapOpcode.RDMA_WRITE) {
            stream.responder.onWrite(stag, to, last, payload);
        } else {
            stream.requester.onReadResponse(stag, to, last, payload);
        }
    }

    private void onUntagged(RdmapOpcode op, InboundUntagged u) {
        if (stream.observer != RdmaObserver.NONE) {
            stream.observer.transferred(stream.ctx.channel(), true, op, u.payload.readableBytes(), u.last);
        }
        switch (op) {
            case RDMA_READ_REQUEST:
                stream.responder.onReadRequest(u);
                break;
            case ATOMIC_REQUEST:
                stream.responder.onAtomicRequest(u);
                break;
            case ATOMIC_RESPONSE:
                stream.requester.onAtomicResponse(u);
                break;
            case TERMINATE:
                stream.onPeerTerminate(u.payload);
                break;
            default: // the Send variants and Immediate Data
                stream.responder.onSend(u, op);
        }
    }

    /** RFC 6581: the Responder's first message from the Initiator is the RTR; it is consumed invisibly. */
    private void onRtr(DdpSegment seg, RdmapOpcode op) {
        stream.awaitingRtr = false;
        RtrMessage type = stream.parameters.rtr();
        boolean ok = (type == RtrMessage.WRITE && op == RdmapOpcode.RDMA_WRITE && seg.payloadLength() == 0)
                || (type == RtrMessage.READ && op == RdmapOpcode.RDMA_READ_REQUEST)
                || (type == RtrMessage.SEND && op == RdmapOpcode.SEND && seg.payloadLength() == 0);
        if (!ok) {
            LOG.warn("{} peer's first message is {} but the negotiated RTR is {}; processing it normally",
                    stream.ctx.channel(), op.rfcName(), type);
            stream.established.trySuccess(qp);
            receive(seg);
            return;
        }
        if (op == RdmapOpcode.RDMA_READ_REQUEST) {
            // answered with a zero-length Read Response
            stream.responder.onReadRequest(untagged.of((DdpUntaggedSegment) seg));
        } // a Send RTR needs nothing: the receive queue starts at MSN 2
        stream.established.trySuccess(qp);
        stream.requester.pump(false);
    }

    // ------------------------------------------------------------------ transmit

    /** Writes from handlers above the engine pass, except after a Terminate (RFC 5040 §6.2.2). */
    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (stream.state == QpState.TERMINATE || stream.state == QpState.ERROR) {
            ReferenceCountUtil.release(msg);
            promise.tryFailure(new IllegalStateException("stream terminated"));
            return;
        }
        ctx.write(msg, promise);
    }
}
