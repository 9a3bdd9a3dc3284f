package dev.iwarp.rdmap.engine;

import dev.iwarp.framing.PeerAddress;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpSegmenter;
import dev.iwarp.ddp.TaggedBufferTable;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpStream;
import dev.iwarp.rdmap.RdmapMessages;
import dev.iwarp.rdmap.ReadRequestHeader;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaObserver;
import dev.iwarp.verbs.SendQueueFullException;
import dev.iwarp.verbs.WcStatus;
import dev.iwarp.verbs.internal.VerbsAccess;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;
import org.slf4j.Logger;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * The RDMAP Stream of one queue pair (RFC 5040 §6, RDMAP Stream Management; siw's qp): its state
 * ({@link QpState}), the parameters the lower layer established, and the transitions every part of the
 * engine shares: RTS, the Terminate we send for an error the
 * peer caused (RFC 5040 §5.4, §7), the peer's Terminate, connection loss and graceful close; each
 * completes outstanding work in error through {@link Requester#flush} and {@link Responder#flush}.
 * Confined to the event loop except for the volatile fields the {@link QueuePair} reads.
 */
final class RdmapStream implements StreamLifecycle {
    static final Logger LOG = RdmaEngine.LOG;
    private static final VerbsAccess VERBS = VerbsAccess.get();

    private final ProtectionDomain pd;
    private final TaggedBufferTable table;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final QueuePair qp;
    private final Transmitter tx = new Transmitter();
    private final Promise<QueuePair> established = ImmediateEventExecutor.INSTANCE.newPromise();
    private final Promise<Void> closed = ImmediateEventExecutor.INSTANCE.newPromise();
    private Requester requester;
    private Responder responder;

    private volatile ChannelHandlerContext ctx;
    private volatile QpState state = QpState.IDLE;
    private volatile LlpParameters parameters;
    /** The Terminate the peer sent, if any (RFC 5040 §5.4). */
    private volatile TerminateMessage peerTerminate;
    private LlpStream lowerLayer;
    /** Told of segments and Terminates (the channel's {@link RdmaObserver#KEY}, read when the engine is added). */
    private RdmaObserver observer = RdmaObserver.NONE;
    private RdmapMessages messages;
    /** RFC 6581: the Responder sends nothing until the Initiator's RTR arrived. */
    private boolean awaitingRtr;
    /** The send-queue depth (libibverbs {@code max_send_wr}): requests posted and not completed at most. */
    private volatile int sendQueueDepth;
    /** Send-queue requests posted and not completed yet (queued, started or outstanding): checked by every post. */
    private volatile int sendWrsPosted;
    private static final AtomicIntegerFieldUpdater<RdmapStream> SEND_WRS_POSTED =
            AtomicIntegerFieldUpdater.newUpdater(RdmapStream.class, "sendWrsPosted");

    RdmapStream(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, QueuePair qp) {
        this.pd = Objects.requireNonNull(pd, "pd");
        this.table = VERBS.taggedBufferTable(pd.device());
        this.sendCq = Objects.requireNonNull(sendCq, "sendCq");
        this.recvCq = Objects.requireNonNull(recvCq, "recvCq");
        this.qp = qp;
    }

    /** The requester and responder of this stream, made once by the engine with their collaborators. */
    void parts(Requester requester, Responder responder) {
        this.requester = requester;
        this.responder = responder;
    }

    /** The engine was added to a pipeline: the stream writes and closes through {@code ctx}. */
    void attach(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** Told of segments and Terminates from now on. */
    void observer(RdmaObserver observer) {
        this.observer = observer;
        tx.observer = observer;
    }

    void sendQueueDepth(int requests) {
        sendQueueDepth = requests;
    }

    /** RFC 6581: whether the Responder still waits for the Initiator's RTR before it sends anything. */
    void awaitingRtr(boolean awaiting) {
        awaitingRtr = awaiting;
    }

    ProtectionDomain pd() {
        return pd;
    }

    TaggedBufferTable table() {
        return table;
    }

    CompletionQueue sendCq() {
        return sendCq;
    }

    CompletionQueue recvCq() {
        return recvCq;
    }

    QueuePair qp() {
        return qp;
    }

    Transmitter tx() {
        return tx;
    }

    Promise<QueuePair> established() {
        return established;
    }

    Promise<Void> closed() {
        return closed;
    }

    Requester requester() {
        return requester;
    }

    Responder responder() {
        return responder;
    }

    /** The engine's context once it was added; {@code null} before. */
    ChannelHandlerContext ctx() {
        return ctx;
    }

    /** The queue pair's state (RFC 5040 §6.2 stream states, as the verbs name them). */
    QpState state() {
        return state;
    }

    /** What the lower layer established (ORD, IRD, RTR, digests); {@code null} before RTS. */
    LlpParameters parameters() {
        return parameters;
    }

    /** The Terminate the peer sent, or {@code null} (RFC 5040 §5.4). */
    TerminateMessage peerTerminate() {
        return peerTerminate;
    }

    RdmaObserver observer() {
        return observer;
    }

    /** The RDMAP messages of this stream's DDP version; {@code null} before RTS. */
    RdmapMessages messages() {
        return messages;
    }

    /** RFC 6581: the Responder sends nothing until the Initiator's RTR arrived. */
    boolean awaitingRtr() {
        return awaitingRtr;
    }

    /** The send-queue depth (libibverbs {@code max_send_wr}). */
    int sendQueueDepth() {
        return sendQueueDepth;
    }

    /**
     * Takes a send-queue slot for a request being posted, from any thread: a counter, nothing allocated.
     *
     * @throws SendQueueFullException when {@link #sendQueueDepth} requests are posted and not completed
     */
    void takeSendSlot() {
        int depth = sendQueueDepth;
        int n;
        do {
            n = sendWrsPosted;
            if (n >= depth) {
                throw new SendQueueFullException(depth);
            }
        } while (!SEND_WRS_POSTED.compareAndSet(this, n, n + 1));
    }

    /** A send-queue request left the queue: its completion was generated (reported or not). */
    void sendSlotFreed() {
        SEND_WRS_POSTED.decrementAndGet(this);
    }

    /** Send-queue requests posted and not completed. */
    int sendWrsPosted() {
        return sendWrsPosted;
    }

    boolean isRts() {
        return state == QpState.RTS;
    }

    /** Full operation over the lower layer (RFC 5041 §6: every queue starts at MSN 1). */
    void establish(LlpParameters p, LlpStream lower) {
        parameters = p;
        lowerLayer = lower;
        messages = new RdmapMessages(new DdpSegmenter(lower, p.ddpVersion()));
        tx.start(lower);
        state = QpState.RTS;
    }

    /**
     * Sends a Terminate for an error the peer caused (RFC 5040 §7), moves to TERMINATE, completes all
     * outstanding work in error and closes once the Terminate is on the wire.
     *
     * @param offending   the segment that failed, or {@code null} (not released here)
     * @param readRequest the offending Read Request header to quote, or {@code null}
     */
    @Override
    public void terminate(TerminateCause cause, DdpSegment offending, ReadRequestHeader readRequest, String what) {
        terminate(TerminateMessage.forError(cause, offending, readRequest), what);
    }

    @SuppressWarnings("try") // the Terminate's fields are in the MDC while the try's body logs
    @Override
    public void terminate(TerminateMessage t, String what) {
        if (state == QpState.TERMINATE || state == QpState.ERROR) {
            return;
        }
        String hold = lowerLayer == null ? "the lower layer is not in full operation" : lowerLayer.transmitHoldReason();
        observer.terminate(ctx.channel(), hold == null ? RdmaObserver.TerminateDirection.SENT
                : RdmaObserver.TerminateDirection.WITHHELD, t.cause());
        try (TerminateFields f = TerminateFields.of(hold == null ? "sent" : "withheld", t.cause())) {
            if (hold == null) {
                LOG.warn("peer {}: {}; sending Terminate {} and closing", PeerAddress.of(ctx), what, t.cause());
            } else {
                LOG.warn("peer {}: {}; closing without Terminate {}: {}", PeerAddress.of(ctx), what, t.cause(),
                        hold);
            }
        }
        state = QpState.TERMINATE;
        // the Terminate is flushed before any completion runs: a ULP that closes the channel when it
        // sees its work flushed must not cut the Terminate off
        String why = "stream terminated: " + t.cause();
        tx.abort(hold == null ? messages.terminate(t, ctx.alloc()) : null, why);
        flushAll(WcStatus.WR_FLUSH_ERR, why);
    }

    /**
     * RFC 5040 §5.4: the peer's Terminate (its RDMAP payload: {@code terminate}) stops the stream; it is
     * not answered.
     */
    @SuppressWarnings("try")
    @Override
    public void onPeerTerminate(ByteBuf terminate) {
        TerminateMessage t;
        try {
            t = TerminateMessage.decode(terminate);
        } catch (RuntimeException e) {
            LOG.warn("peer {} sent an undecodable Terminate ({}); closing", PeerAddress.of(ctx), e.getMessage());
            toError(WcStatus.FATAL_ERR, "undecodable Terminate");
            ctx.close();
            return;
        }
        peerTerminate = t;
        observer.terminate(ctx.channel(), RdmaObserver.TerminateDirection.RECEIVED, t.cause());
        try (TerminateFields f = TerminateFields.of("received", t.cause())) {
            LOG.warn("peer {} terminated the stream: {}", PeerAddress.of(ctx), t.describe());
        }
        toError(statusFor(t.cause()), "peer's Terminate: " + t.describe());
        ctx.close();
    }

    /**
     * A Terminate's fields in the logging MDC while its line is logged (RFC 5040 §4.7 Layer, EType, Error Code),
     * for log collectors: {@code direction} is sent, withheld (the lower layer could not carry it) or received.
     * MDC rather than SLF4J key-value pairs: Logback's turbo filters (serve's per-peer warning limit) see a
     * plain call's arguments, not a fluent one's.
     */
    private record TerminateFields(String[] keys) implements AutoCloseable {
        static TerminateFields of(String direction, TerminateCause c) {
            org.slf4j.MDC.put("terminate.direction", direction);
            org.slf4j.MDC.put("terminate.layer", Integer.toString(c.layer()));
            org.slf4j.MDC.put("terminate.etype", Integer.toString(c.errorType()));
            org.slf4j.MDC.put("terminate.code", String.format("0x%02x", c.errorCode()));
            return new TerminateFields(new String[] {"terminate.direction", "terminate.layer", "terminate.etype",
                    "terminate.code"});
        }

        @Override
        public void close() {
            for (String k : keys) {
                org.slf4j.MDC.remove(k);
            }
        }
    }

    /** Graceful close (RFC 5040 §6.2.1): what was posted goes out, then the lower layer closes. */
    @Override
    public void closeGracefully() {
        if (state == QpState.RTS) {
            state = QpState.CLOSING;
            tx.closeAfterQueued();
        } else if (state == QpState.IDLE) {
            state = QpState.CLOSING;
            ctx.close();
        }
    }

    /** Moves to ERROR (connection lost or closed, startup failed) and completes everything in error. */
    @Override
    public void toError(WcStatus status, String why) {
        if (state == QpState.ERROR) {
            return;
        }
        state = QpState.ERROR;
        flushAll(status, why);
        tx.discardQueued(why);
    }

    private void flushAll(WcStatus outstandingStatus, String why) {
        requester.flush(outstandingStatus, why);
        responder.flush(why);
    }

    /** The completion status for work the peer's Terminate ended (as the verbs report it). */
    static WcStatus statusFor(TerminateCause c) {
        if (c.layer() == TerminateCause.LAYER_LLP) {
            return WcStatus.FATAL_ERR;
        }
        if (c.layer() == TerminateCause.LAYER_DDP) {
            return c.errorType() == 2 ? WcStatus.REM_INV_REQ_ERR : c.errorType() == 1 ? WcStatus.REM_ACCESS_ERR
                    : WcStatus.REM_OP_ERR;
        }
        return c.errorType() == 1 ? WcStatus.REM_ACCESS_ERR : WcStatus.REM_OP_ERR;
    }
}
