package dev.iwarp.verbs;

import dev.iwarp.ddp.AccessFlags;
import dev.iwarp.ddp.DdpError;
import dev.iwarp.ddp.DdpException;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpSegmenter;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.ddp.TaggedAccessResult;
import dev.iwarp.ddp.TaggedBuffer;
import dev.iwarp.ddp.TaggedBufferTable;
import dev.iwarp.ddp.MsnWindow;
import dev.iwarp.ddp.UntaggedPlacement;
import dev.iwarp.ddp.UntaggedReceiveQueue;
import dev.iwarp.mpa.MpaException;
import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.mpa.MpaRole;
import dev.iwarp.mpa.MpaStartupCompletionEvent;
import dev.iwarp.mpa.RtrType;
import dev.iwarp.rdmap.AtomicOp;
import dev.iwarp.rdmap.AtomicRequestHeader;
import dev.iwarp.rdmap.AtomicResponseHeader;
import dev.iwarp.rdmap.ImmediateData;
import dev.iwarp.rdmap.RdmapError;
import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.rdmap.ReadRequestHeader;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The RDMAP engine of one stream (RFC 5040, RFC 7306): sits above {@link dev.iwarp.ddp.DdpCodec}
 * and turns posted work requests into DDP segments and incoming segments into placement and
 * completions. It owns the queue pair state, ORD enforcement and fencing at the requester, the
 * Read and atomic responder with its IRD limit, Send placement into posted receives, STag
 * invalidation, the RFC 6581 RTR, and Terminate in both directions.
 *
 * <p>All state is confined to the channel's event loop; {@link QueuePair} hands calls from other
 * threads to it.
 */
public final class RdmaEngine extends ChannelDuplexHandler {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaEngine.class);

    private static final int RDMAP_VERSION = 1;
    private static final int QN_SEND = 0;
    private static final int QN_READ_REQUEST = 1;
    private static final int QN_TERMINATE = 2;
    private static final int QN_ATOMIC_RESPONSE = 3;
    /** STag the Initiator names in a Write/Read RTR (siw uses 1: some hardware treats 0 specially). */
    private static final int RTR_STAG = 1;

    private final ProtectionDomain pd;
    private final TaggedBufferTable table;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final QueuePair qp;

    private final List<Runnable> early = new ArrayList<>();
    private volatile ChannelHandlerContext ctx;
    private volatile QpState state = QpState.IDLE;
    private volatile MpaParameters mpa;
    /** The Terminate the peer sent, if any (RFC 5040 §5.4). */
    private volatile TerminateMessage peerTerminate;
    private Promise<QueuePair> established;
    private Promise<Void> closed;

    private int mulpdu = 128;
    private int ddpVersion = 1;
    private int ird;
    private int ord;
    private boolean awaitingRtr;

    // transmit side
    private final ArrayDeque<SendRequest> sendQueue = new ArrayDeque<>();
    private final ArrayDeque<Outstanding> outstanding = new ArrayDeque<>();
    /** Started requests in submission order; completions leave in this order (RFC 5040 §5.5). */
    private final ArrayDeque<Pending> started = new ArrayDeque<>();
    /** Cuts messages to MULPDU and counts the transmit MSN of each queue (RFC 5041 §5.2). */
    private DdpSegmenter segmenter;
    private final ArrayList<DdpSegment> segments = new ArrayList<>();
    private int nextAtomicId;

    // receive side
    /** Receives posted before RTS; handed to {@link #receives} when the stream is established. */
    private final ArrayDeque<RecvRequest> earlyReceives = new ArrayDeque<>();
    /** QN 0: Sends and Immediate Data into posted receives (RFC 5041 §5.3). */
    private UntaggedReceiveQueue<RecvRequest> receives;
    /** QN 1: Read and Atomic Requests, one IRD slot each until the response is written. */
    private MsnWindow inboundRequests;
    /** QN 3: Atomic Responses to our requests. */
    private MsnWindow atomicResponses;

    public RdmaEngine(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq) {
        this.pd = Objects.requireNonNull(pd, "pd");
        this.table = pd.device().table();
        this.sendCq = Objects.requireNonNull(sendCq, "sendCq");
        this.recvCq = Objects.requireNonNull(recvCq, "recvCq");
        this.qp = new QueuePair(this);
        this.established = ImmediateEventExecutor.INSTANCE.newPromise();
        this.closed = ImmediateEventExecutor.INSTANCE.newPromise();
    }

    public QueuePair queuePair() {
        return qp;
    }

    QpState state() {
        return state;
    }

    ProtectionDomain pd() {
        return pd;
    }

    CompletionQueue sendCq() {
        return sendCq;
    }

    CompletionQueue recvCq() {
        return recvCq;
    }

    Channel channel() {
        ChannelHandlerContext c = ctx;
        return c == null ? null : c.channel();
    }

    TerminateMessage peerTerminate() {
        return peerTerminate;
    }

    MpaParameters mpaParameters() {
        return mpa;
    }

    Future<QueuePair> established() {
        return established;
    }

    void submit(Runnable task) {
        ChannelHandlerContext c = ctx;
        if (c == null) {
            synchronized (early) {
                if (ctx == null) {
                    early.add(task); // runs on the event loop once the engine is in a pipeline
                    return;
                }
                c = ctx;
            }
        }
        if (c.executor().inEventLoop()) {
            task.run();
        } else {
            c.executor().execute(task);
        }
    }

    // ------------------------------------------------------------------ lifecycle

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        List<Runnable> tasks;
        synchronized (early) {
            this.ctx = ctx;
            tasks = new ArrayList<>(early);
            early.clear();
        }
        tasks.forEach(Runnable::run);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof MpaStartupCompletionEvent) {
            MpaStartupCompletionEvent e = (MpaStartupCompletionEvent) evt;
            if (e.isSuccess()) {
                onEstablished(e.parameters());
            } else {
                toError(WcStatus.WR_FLUSH_ERR, "MPA startup failed: " + e.cause());
                established.tryFailure(e.cause());
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void onEstablished(MpaParameters p) {
        mpa = p;
        mulpdu = p.mulpdu();
        ddpVersion = p.ddpVersion();
        segmenter = new DdpSegmenter(() -> mulpdu, ddpVersion);
        ird = p.ird();
        ord = p.ord();
        boolean sendRtr = p.rtrType() == RtrType.SEND && p.role() == MpaRole.RESPONDER;
        // a Send RTR takes MSN 1 of QN 0 without a receive buffer (RFC 6581)
        receives = new UntaggedReceiveQueue<>(QN_SEND, sendRtr ? 2 : 1);
        RecvRequest r;
        while ((r = earlyReceives.poll()) != null) {
            post(r);
        }
        inboundRequests = new MsnWindow(QN_READ_REQUEST, ird);
        atomicResponses = new MsnWindow(QN_ATOMIC_RESPONSE, Math.max(1, ord));
        state = QpState.RTS;
        if (p.rtrType() != null) {
            if (p.role() == MpaRole.INITIATOR) {
                sendRtr(p.rtrType()); // RFC 6581: the RTR is the Initiator's first FPDU
            } else {
                awaitingRtr = true; // RFC 6581: established for the ULP once the RTR arrived
            }
        }
        if (!awaitingRtr) {
            established.trySuccess(qp);
        }
        LOG.debug("{} RDMAP stream in RTS: {}", ctx.channel(), p);
        pump();
    }

    private void sendRtr(RtrType type) {
        switch (type) {
            case WRITE:
                writeTagged(RdmapOpcode.RDMA_WRITE, RTR_STAG, 0, Unpooled.EMPTY_BUFFER, ctx.voidPromise());
                break;
            case READ: {
                // zero-length Read: sink STag 0 TO 0, source STag 1 TO 0 (siw-interop §6); takes an ORD credit
                ReadRequestHeader h = new ReadRequestHeader(0, 0, 0, RTR_STAG, 0);
                outstanding.add(Outstanding.read(null, 0, 0, 0));
                writeReadRequest(h);
                break;
            }
            case SEND:
            default:
                writeUntagged(RdmapOpcode.SEND, 0, QN_SEND, Unpooled.EMPTY_BUFFER, ctx.voidPromise());
                break;
        }
        ctx.flush();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        toError(WcStatus.WR_FLUSH_ERR, "connection closed");
        established.tryFailure(new IllegalStateException("connection closed before RTS"));
        closed.trySuccess(null);
        super.channelInactive(ctx);
    }

    Future<Void> closeGracefully() {
        submit(() -> {
            if (state == QpState.RTS || state == QpState.IDLE) {
                state = QpState.CLOSING;
                ctx.flush();
                // an empty write straight to the transport completes after everything written before it;
                // written from here it would pass the framer and become a zero-length FPDU
                ctx.pipeline().firstContext().writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            }
        });
        return closed;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof MpaException) {
            MpaException e = (MpaException) cause;
            // RFC 5044 §8: codes 2, 3 (and our 5) leave TCP open for RDMAP to Terminate (Layer 2, EType 0)
            terminate(TerminateCause.ofMpa(e.errorCode().code()), null, null, "peer's FPDU: " + e.getMessage());
        } else if (cause instanceof DdpException) {
            DdpException e = (DdpException) cause;
            terminate(TerminateCause.of(e.error()), null, null, e.getMessage());
        } else if (cause instanceof java.io.IOException) {
            // RFC 5044 §8 code 1: the TCP connection was reset or lost
            LOG.info("{} connection lost: {}", ctx.channel(), cause.getMessage());
            toError(WcStatus.FATAL_ERR, "connection lost: " + cause.getMessage());
            ctx.close();
        } else {
            LOG.warn("{} closing after an unexpected error", ctx.channel(), cause);
            toError(WcStatus.FATAL_ERR, String.valueOf(cause));
            ctx.close();
        }
    }

    // ------------------------------------------------------------------ posting

    void postRecv(RecvRequest r) {
        if (state == QpState.ERROR || state == QpState.TERMINATE) {
            recvCq.add(Completion.error(r.wrId(), WcOpcode.RECV, WcStatus.WR_FLUSH_ERR, "queue pair in " + state));
            return;
        }
        MemoryRegion mr = r.sge().region();
        if (!mr.isValid() || mr.pd() != pd || !mr.access().contains(Access.LOCAL_WRITE)) {
            recvCq.add(Completion.error(r.wrId(), WcOpcode.RECV, WcStatus.LOC_PROT_ERR, "receive buffer " + mr
                    + " is not a valid LOCAL_WRITE region of " + pd));
            return;
        }
        if (receives == null) {
            earlyReceives.add(r);
        } else {
            post(r);
        }
    }

    private void post(RecvRequest r) {
        Sge sge = r.sge();
        receives.post(sge.region().memory(), sge.offset(), sge.length(), r);
    }

    void postSend(SendRequest wr) {
        if (state == QpState.ERROR || state == QpState.TERMINATE || state == QpState.CLOSING) {
            sendCq.add(Completion.error(wr.wrId(), opcodeOf(wr), WcStatus.WR_FLUSH_ERR, "queue pair in " + state));
            return;
        }
        sendQueue.add(wr);
        if (state == QpState.RTS) {
            pump();
        }
    }

    /** Starts queued requests in order while ORD and fences allow (RFC 5040 §5.2, §5.5). */
    private void pump() {
        boolean wrote = false;
        while (state == QpState.RTS && !awaitingRtr) {
            SendRequest wr = sendQueue.peek();
            if (wr == null) {
                break;
            }
            boolean readLike = wr.kind() == SendRequest.Kind.RDMA_READ || wr.kind().name().startsWith("ATOMIC");
            if (wr.isFenced() && !outstanding.isEmpty()) {
                break;
            }
            if (readLike && outstanding.size() >= ord) {
                break; // ORD: no more outstanding Read/atomic Requests than negotiated
            }
            sendQueue.poll();
            execute(wr);
            wrote = true;
        }
        if (wrote) {
            ctx.flush();
        }
    }

    private void execute(SendRequest wr) {
        Pending pending = new Pending(wr);
        started.add(pending);
        Sge sge = wr.local();
        if (sge != null) {
            MemoryRegion mr = sge.region();
            boolean needsWrite = wr.kind() == SendRequest.Kind.RDMA_READ || wr.kind().name().startsWith("ATOMIC");
            if (!mr.isValid() || mr.pd() != pd || (needsWrite && !mr.access().contains(Access.LOCAL_WRITE))) {
                complete(pending, Completion.error(wr.wrId(), opcodeOf(wr), WcStatus.LOC_PROT_ERR,
                        "local SGE " + sge + (mr.pd() != pd ? " of another PD" : "")));
                return;
            }
        }
        switch (wr.kind()) {
            case SEND:
            case SEND_WITH_INVALIDATE: {
                RdmapOpcode op = wr.kind() == SendRequest.Kind.SEND
                        ? (wr.isSolicited() ? RdmapOpcode.SEND_WITH_SE : RdmapOpcode.SEND)
                        : (wr.isSolicited() ? RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE : RdmapOpcode.SEND_WITH_INVALIDATE);
                writeUntagged(op, wr.invalidateStag(), QN_SEND, slice(sge), localCompletion(pending));
                break;
            }
            case RDMA_WRITE:
                if (sge.length() > 0 && Long.compareUnsigned(wr.remoteTo() + sge.length() - 1, wr.remoteTo()) < 0) {
                    complete(pending, Completion.error(wr.wrId(), WcOpcode.RDMA_WRITE, WcStatus.LOC_PROT_ERR,
                            "remote TO + length wraps past 2^64"));
                    return;
                }
                writeTagged(RdmapOpcode.RDMA_WRITE, wr.remoteStag(), wr.remoteTo(), slice(sge), localCompletion(pending));
                break;
            case RDMA_READ: {
                outstanding.add(Outstanding.read(pending, sge.region().stag(), sge.to(), sge.length()));
                writeReadRequest(new ReadRequestHeader(sge.region().stag(), sge.to(), sge.length(), wr.remoteStag(),
                        wr.remoteTo()));
                break;
            }
            case IMMEDIATE_DATA: {
                ByteBuf imm = ctx.alloc().buffer(8).writeLong(wr.data());
                writeUntagged(wr.isSolicited() ? RdmapOpcode.IMMEDIATE_DATA_WITH_SE : RdmapOpcode.IMMEDIATE_DATA, 0,
                        QN_SEND, imm, localCompletion(pending));
                break;
            }
            case ATOMIC_FETCH_ADD:
            case ATOMIC_SWAP:
            case ATOMIC_COMPARE_SWAP: {
                AtomicOp op = wr.kind() == SendRequest.Kind.ATOMIC_FETCH_ADD ? AtomicOp.FETCH_ADD
                        : wr.kind() == SendRequest.Kind.ATOMIC_SWAP ? AtomicOp.SWAP : AtomicOp.COMPARE_SWAP;
                int id = ++nextAtomicId == 0 ? ++nextAtomicId : nextAtomicId; // 0 marks plain Reads
                outstanding.add(Outstanding.atomic(pending, id));
                AtomicRequestHeader h = new AtomicRequestHeader(op.value(), id, wr.remoteStag(), wr.remoteTo(), wr.data(),
                        wr.dataMask(), wr.compare(), wr.compareMask());
                ByteBuf payload = ctx.alloc().buffer(AtomicRequestHeader.LENGTH);
                h.encode(payload);
                writeUntagged(RdmapOpcode.ATOMIC_REQUEST, 0, QN_READ_REQUEST, payload, ctx.voidPromise());
                break;
            }
            default:
                throw new IllegalStateException(wr.kind().name());
        }
    }

    private ByteBuf slice(Sge sge) {
        return sge.region().memory().retainedSlice(sge.offset(), sge.length());
    }

    /** Completes a Send, Write or Immediate Data when its last segment was handed to TCP. */
    private ChannelPromise localCompletion(Pending pending) {
        SendRequest wr = pending.wr;
        ChannelPromise p = ctx.newPromise();
        p.addListener(f -> complete(pending, f.isSuccess() ? Completion.success(wr.wrId(), opcodeOf(wr), wr.length())
                : Completion.error(wr.wrId(), opcodeOf(wr), WcStatus.WR_FLUSH_ERR, String.valueOf(f.cause()))));
        return p;
    }

    /** Records a request's outcome and releases completions in submission order. */
    private void complete(Pending pending, Completion c) {
        if (pending.result == null) {
            pending.result = c;
        }
        Pending head;
        while ((head = started.peek()) != null && head.result != null) {
            started.poll();
            if (!head.result.isSuccess() || head.wr.isSignaled()) {
                sendCq.add(head.result);
            }
        }
    }

    private void writeReadRequest(ReadRequestHeader h) {
        ByteBuf payload = ctx.alloc().buffer(ReadRequestHeader.LENGTH);
        h.encode(payload);
        writeUntagged(RdmapOpcode.RDMA_READ_REQUEST, 0, QN_READ_REQUEST, payload, ctx.voidPromise());
    }

    /**
     * Segments an untagged message with the queue's next MSN and writes it; {@code last} completes with
     * the last segment. Takes ownership of {@code payload}.
     */
    private void writeUntagged(RdmapOpcode op, int rsvdUlp2, int qn, ByteBuf payload, ChannelPromise last) {
        try {
            segmenter.segmentUntagged(control(op), rsvdUlp2, qn, payload, segments);
            writeSegments(last);
        } finally {
            payload.release();
        }
    }

    /** Segments a tagged message and writes it. Takes ownership of {@code payload}. */
    private void writeTagged(RdmapOpcode op, int stag, long to, ByteBuf payload, ChannelPromise last) {
        try {
            segmenter.segmentTagged(control(op), stag, to, payload, segments);
            writeSegments(last);
        } finally {
            payload.release();
        }
    }

    private void writeSegments(ChannelPromise last) {
        int n = segments.size();
        for (int i = 0; i < n; i++) {
            ctx.write(segments.get(i), i == n - 1 ? last : ctx.voidPromise());
        }
        segments.clear();
    }

    private int control(RdmapOpcode op) {
        return (ddpVersion == 0 ? 0 : RDMAP_VERSION << 6) | op.value();
    }

    // ------------------------------------------------------------------ receive

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof DdpSegment)) {
            ctx.fireChannelRead(msg);
            return;
        }
        DdpSegment seg = (DdpSegment) msg;
        try {
            if (state != QpState.RTS) {
                return; // after a Terminate nothing more is processed (RFC 5040 §6.2.2)
            }
            receive(seg);
        } finally {
            seg.release();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush(); // Read Responses and atomic responses written while reading
        ctx.fireChannelReadComplete();
    }

    private void receive(DdpSegment seg) {
        if (seg.ddpVersion() != ddpVersion) {
            // RFC 5041 §7.2: version error, EType by the T bit, no header in the Terminate
            terminate(TerminateCause.of(seg.isTagged() ? DdpError.INVALID_DDP_VERSION_TAGGED
                    : DdpError.INVALID_DDP_VERSION_UNTAGGED), null, null, "DDP version " + seg.ddpVersion());
            return;
        }
        int rdmapVersion = seg.rsvdUlp() >>> 6;
        if (rdmapVersion != (ddpVersion == 0 ? 0 : RDMAP_VERSION)) {
            terminate(TerminateCause.of(RdmapError.INVALID_RDMAP_VERSION), null, null, "RDMAP version " + rdmapVersion);
            return;
        }
        RdmapOpcode op = RdmapOpcode.fromValue(seg.rsvdUlp() & 0x0F);
        if (op == null || op.tagged() != seg.isTagged()) {
            terminate(TerminateCause.of(RdmapError.UNEXPECTED_OPCODE), null, null,
                    "opcode 0x" + Integer.toHexString(seg.rsvdUlp() & 0x0F) + (seg.isTagged() ? " tagged" : " untagged"));
            return;
        }
        if (awaitingRtr) {
            onRtr(seg, op);
            return;
        }
        if (seg.isTagged()) {
            DdpTaggedSegment t = (DdpTaggedSegment) seg;
            if (op == RdmapOpcode.RDMA_WRITE) {
                onWrite(t);
            } else {
                onReadResponse(t);
            }
            return;
        }
        DdpUntaggedSegment u = (DdpUntaggedSegment) seg;
        if (u.qn() != op.queueNumber()) {
            terminate(TerminateCause.of(DdpError.INVALID_QN), seg, null, "QN " + Integer.toUnsignedLong(u.qn())
                    + " for " + op);
            return;
        }
        switch (op) {
            case SEND:
            case SEND_WITH_SE:
            case SEND_WITH_INVALIDATE:
            case SEND_WITH_SE_AND_INVALIDATE:
            case IMMEDIATE_DATA:
            case IMMEDIATE_DATA_WITH_SE:
                onSend(u, op);
                break;
            case RDMA_READ_REQUEST:
                onReadRequest(u);
                break;
            case ATOMIC_REQUEST:
                onAtomicRequest(u);
                break;
            case ATOMIC_RESPONSE:
                onAtomicResponse(u);
                break;
            case TERMINATE:
                onTerminate(u);
                break;
            default:
                terminate(TerminateCause.of(RdmapError.UNEXPECTED_OPCODE), seg, null, "opcode " + op);
        }
    }

    /** RFC 6581: the Responder's first FPDU is the RTR; it is consumed invisibly. */
    private void onRtr(DdpSegment seg, RdmapOpcode op) {
        awaitingRtr = false;
        RtrType type = mpa.rtrType();
        boolean ok = (type == RtrType.WRITE && op == RdmapOpcode.RDMA_WRITE && seg.payloadLength() == 0)
                || (type == RtrType.READ && op == RdmapOpcode.RDMA_READ_REQUEST)
                || (type == RtrType.SEND && op == RdmapOpcode.SEND && seg.payloadLength() == 0);
        if (!ok) {
            LOG.warn("{} peer's first FPDU is {} but the negotiated RTR is {}; processing it normally",
                    ctx.channel(), op, type);
            established.trySuccess(qp);
            receive(seg);
            return;
        }
        if (op == RdmapOpcode.RDMA_READ_REQUEST) {
            onReadRequest((DdpUntaggedSegment) seg); // answered with a zero-length Read Response
        } // a Send RTR needs nothing: the receive queue starts at MSN 2 (see onEstablished)
        established.trySuccess(qp);
        pump();
    }

    private void onWrite(DdpTaggedSegment t) {
        int len = t.payloadLength();
        if (len == 0) {
            return; // RFC 5040 §5.1 / RFC 6581: zero-length Writes are not validated
        }
        TaggedAccessResult r = table.check(t.stag(), pd, t.to(), len, AccessFlags.REMOTE_WRITE);
        if (r != TaggedAccessResult.OK) {
            terminate(r == TaggedAccessResult.ACCESS_RIGHTS ? TerminateCause.of(RdmapError.ACCESS_RIGHTS_VIOLATION)
                    : TerminateCause.of(r.ddpError()), t, null, "RDMA Write " + len + " octets to "
                    + hex(t.stag()) + "@0x" + Long.toHexString(t.to()) + ": " + r);
            return;
        }
        table.lookup(t.stag()).place(t.to(), t.payload());
    }

    private void onReadResponse(DdpTaggedSegment t) {
        Outstanding o = outstanding.peek();
        if (o == null || o.atomicId != 0) {
            terminate(TerminateCause.of(RdmapError.UNEXPECTED_OPCODE), t, null, "Read Response without an outstanding Read");
            return;
        }
        int len = t.payloadLength();
        if (t.stag() != o.sinkStag && !(len == 0 && o.size == 0)) {
            terminate(TerminateCause.of(DdpError.INVALID_STAG), t, null, "Read Response to " + hex(t.stag())
                    + ", the outstanding Read's sink is " + hex(o.sinkStag));
            return;
        }
        if ((len > 0 && t.to() != o.sinkTo + o.received) || (long) o.received + len > o.size) {
            terminate(TerminateCause.of(DdpError.BASE_OR_BOUNDS_VIOLATION), t, null, "Read Response TO 0x"
                    + Long.toHexString(t.to()) + " +" + len + " outside the outstanding Read");
            return;
        }
        if (len > 0) {
            TaggedAccessResult r = table.check(t.stag(), pd, t.to(), len, AccessFlags.LOCAL_WRITE);
            if (r != TaggedAccessResult.OK) {
                terminate(TerminateCause.of(r.ddpError()), t, null, "Read Response sink: " + r);
                return;
            }
            table.lookup(t.stag()).place(t.to(), t.payload());
            o.received += len;
        }
        if (t.isLast()) {
            if (o.received != o.size) {
                terminate(TerminateCause.of(DdpError.BASE_OR_BOUNDS_VIOLATION), t, null, "Read Response of "
                        + o.received + " octets for a Read of " + o.size);
                return;
            }
            outstanding.poll();
            if (o.pending != null) {
                complete(o.pending, Completion.success(o.pending.wr.wrId(), WcOpcode.RDMA_READ, o.size));
            }
            pump();
        }
    }

    private void onSend(DdpUntaggedSegment u, RdmapOpcode op) {
        boolean immediate = op == RdmapOpcode.IMMEDIATE_DATA || op == RdmapOpcode.IMMEDIATE_DATA_WITH_SE;
        long immediateValue = 0;
        UntaggedPlacement<RecvRequest> p;
        if (immediate) {
            // RFC 7306: one segment of exactly 8 octets, reported in the completion, consuming a receive
            if (u.payloadLength() != ImmediateData.LENGTH || !u.isLast() || u.mo() != 0) {
                terminate(TerminateCause.of(RdmapError.UNEXPECTED_OPCODE), u, null, "Immediate Data of "
                        + u.payloadLength() + " octets");
                return;
            }
            immediateValue = u.payload().getLong(u.payload().readerIndex());
            p = receives.place(u.replace(Unpooled.EMPTY_BUFFER));
        } else {
            p = receives.place(u);
        }
        if (p.isError()) {
            terminate(TerminateCause.of(p.error()), u, null, op + " MSN " + Integer.toUnsignedLong(u.msn()) + " MO "
                    + Integer.toUnsignedLong(u.mo()) + " of " + u.payloadLength() + " octets: " + p.error().description());
            return;
        }
        if (!p.isDelivered()) {
            return;
        }
        boolean invalidate = op.invalidates();
        int stag = u.rsvdUlp2();
        if (invalidate) {
            // RFC 5040 §5.3: invalidate before delivering
            TaggedBuffer tb = table.lookup(stag);
            if (tb == null || !tb.isValid() || !tb.remoteInvalidate()) {
                terminate(TerminateCause.of(RdmapError.REMOTE_OPERATION_STAG_CANNOT_BE_INVALIDATED), u, null,
                        "Send with Invalidate of unknown, invalid or protected STag " + hex(stag));
                return;
            }
            if (tb.protectionDomain() != pd) {
                terminate(TerminateCause.of(RdmapError.REMOTE_PROTECTION_STAG_CANNOT_BE_INVALIDATED), u, null,
                        "Send with Invalidate of STag " + hex(stag) + " of another protection domain");
                return;
            }
            table.invalidate(stag);
        }
        recvCq.add(Completion.receive(p.context().wrId(), immediate ? WcOpcode.RECV_IMMEDIATE : WcOpcode.RECV,
                p.messageLength(), invalidate, invalidate ? stag : 0, immediateValue, op.solicitedEvent()));
    }

    /** Takes an IRD slot for a Read or Atomic Request; false (after a Terminate) when it cannot. */
    private boolean acceptInboundRequest(DdpUntaggedSegment u, RdmapOpcode op, int headerLength) {
        if (u.payloadLength() != headerLength || !u.isLast()) {
            terminate(TerminateCause.of(RdmapError.CATASTROPHIC_STREAM), u, null, op + " with "
                    + u.payloadLength() + " octets of RDMAP header");
            return false;
        }
        DdpError e = inboundRequests.accept(u);
        if (e == DdpError.INVALID_MSN_NO_BUFFER) {
            // beyond IRD: siw sends RDMAP / Remote Operation / 0x07 (rdmap.md §5.2)
            terminate(TerminateCause.of(RdmapError.CATASTROPHIC_STREAM), u, null, op + " beyond IRD " + ird);
            return false;
        }
        if (e != null) {
            terminate(TerminateCause.of(e), u, null, op + " MSN " + Integer.toUnsignedLong(u.msn()) + ": "
                    + e.description());
            return false;
        }
        return true;
    }

    private void onReadRequest(DdpUntaggedSegment u) {
        if (!acceptInboundRequest(u, RdmapOpcode.RDMA_READ_REQUEST, ReadRequestHeader.LENGTH)) {
            return;
        }
        ReadRequestHeader h = ReadRequestHeader.decode(u.payload(), u.payload().readerIndex());
        long size = h.size();
        if (size == 0) {
            respondRead(h, Unpooled.EMPTY_BUFFER); // zero-length Read: no validation (RFC 6581 Read RTR)
            return;
        }
        TaggedAccessResult r = table.check(h.sourceStag(), pd, h.sourceTo(), size, AccessFlags.REMOTE_READ);
        if (r != TaggedAccessResult.OK) {
            terminate(TerminateCause.of(protectionError(r)), u, h, "Read Request of " + size + " octets from "
                    + hex(h.sourceStag()) + "@0x" + Long.toHexString(h.sourceTo()) + ": " + r);
            return;
        }
        respondRead(h, table.lookup(h.sourceStag()).read(h.sourceTo(), (int) size));
    }

    private void respondRead(ReadRequestHeader h, ByteBuf data) {
        ChannelPromise done = ctx.newPromise();
        done.addListener(f -> inboundRequests.release()); // the IRD slot frees once the response is written
        writeTagged(RdmapOpcode.RDMA_READ_RESPONSE, h.sinkStag(), h.sinkTo(), data, done);
    }

    private void onAtomicRequest(DdpUntaggedSegment u) {
        if (!acceptInboundRequest(u, RdmapOpcode.ATOMIC_REQUEST, AtomicRequestHeader.LENGTH)) {
            return;
        }
        AtomicRequestHeader h = AtomicRequestHeader.decode(u.payload(), u.payload().readerIndex());
        if (h.operation() == null) {
            terminate(TerminateCause.of(RdmapError.UNEXPECTED_OPCODE), u, null, "unsupported AtomOp");
            return;
        }
        TaggedAccessResult r = table.check(h.remoteStag(), pd, h.remoteTo(), 8, AccessFlags.REMOTE_ATOMIC);
        if (r == TaggedAccessResult.OK && (h.remoteTo() & 7) != 0) {
            r = TaggedAccessResult.BASE_OR_BOUNDS; // the 64-bit target must be naturally aligned (RFC 7306)
        }
        if (r != TaggedAccessResult.OK) {
            terminate(TerminateCause.of(protectionError(r)), u, null, "Atomic " + h.operation() + " on "
                    + hex(h.remoteStag()) + "@0x" + Long.toHexString(h.remoteTo()) + ": " + r);
            return;
        }
        TaggedBuffer tb = table.lookup(h.remoteStag());
        long original;
        synchronized (tb) { // atomic with respect to other atomics on this region, from any connection
            ByteBuf target = tb.read(h.remoteTo(), 8);
            try {
                original = target.getLong(target.readerIndex());
                long updated = h.apply(original); // RFC 7306 with masks
                ByteBuf value = Unpooled.buffer(8).writeLong(updated);
                tb.place(h.remoteTo(), value);
                value.release();
            } finally {
                target.release();
            }
        }
        ByteBuf payload = ctx.alloc().buffer(AtomicResponseHeader.LENGTH);
        new AtomicResponseHeader(h.requestId(), original).encode(payload);
        ChannelPromise done = ctx.newPromise();
        done.addListener(f -> inboundRequests.release());
        writeUntagged(RdmapOpcode.ATOMIC_RESPONSE, 0, QN_ATOMIC_RESPONSE, payload, done);
    }

    private void onAtomicResponse(DdpUntaggedSegment u) {
        Outstanding o = outstanding.peek();
        if (u.payloadLength() != AtomicResponseHeader.LENGTH || o == null || o.atomicId == 0) {
            terminate(TerminateCause.of(RdmapError.UNEXPECTED_OPCODE), u, null, "Atomic Response without a matching request");
            return;
        }
        DdpError e = atomicResponses.accept(u);
        if (e != null) {
            terminate(TerminateCause.of(e), u, null, "Atomic Response MSN " + Integer.toUnsignedLong(u.msn()));
            return;
        }
        atomicResponses.release();
        AtomicResponseHeader h = AtomicResponseHeader.decode(u.payload(), u.payload().readerIndex());
        if (h.requestId() != o.atomicId) {
            terminate(TerminateCause.of(RdmapError.UNEXPECTED_OPCODE), u, null, "Atomic Response id " + h.requestId()
                    + ", expected " + o.atomicId);
            return;
        }
        outstanding.poll();
        SendRequest wr = o.pending.wr;
        Sge result = wr.local();
        result.region().memory().setLong(result.offset(), h.originalValue());
        complete(o.pending, new Completion(wr.wrId(), WcStatus.SUCCESS, opcodeOf(wr), 8, false, 0, h.originalValue(),
                false, null));
        pump();
    }

    private void onTerminate(DdpUntaggedSegment u) {
        TerminateMessage t;
        try {
            t = TerminateMessage.decode(u.payload());
        } catch (RuntimeException e) {
            LOG.warn("{} peer sent an undecodable Terminate ({}); closing", ctx.channel(), e.getMessage());
            toError(WcStatus.FATAL_ERR, "undecodable Terminate");
            ctx.close();
            return;
        }
        peerTerminate = t;
        LOG.warn("{} peer {} terminated the stream: {}", ctx.channel(), ctx.channel().remoteAddress(), t.describe());
        // RFC 5040 §5.4: stop, surface the error, do not answer, close
        toError(statusFor(t.cause()), "peer's Terminate: " + t.describe());
        ctx.close();
    }

    // ------------------------------------------------------------------ errors

    private static RdmapError protectionError(TaggedAccessResult r) {
        switch (r) {
            case INVALID_STAG:
                return RdmapError.INVALID_STAG;
            case BASE_OR_BOUNDS:
                return RdmapError.BASE_OR_BOUNDS_VIOLATION;
            case ACCESS_RIGHTS:
                return RdmapError.ACCESS_RIGHTS_VIOLATION;
            case STAG_NOT_ASSOCIATED:
                return RdmapError.STAG_NOT_ASSOCIATED;
            case TO_WRAP:
                return RdmapError.TO_WRAP;
            default:
                throw new IllegalArgumentException(r.name());
        }
    }

    private static WcStatus statusFor(TerminateCause c) {
        if (c.layer() == 2) {
            return WcStatus.FATAL_ERR;
        }
        if (c.layer() == 1) {
            return c.errorType() == 2 ? WcStatus.REM_INV_REQ_ERR : c.errorType() == 1 ? WcStatus.REM_ACCESS_ERR
                    : WcStatus.REM_OP_ERR;
        }
        return c.errorType() == 1 ? WcStatus.REM_ACCESS_ERR : WcStatus.REM_OP_ERR;
    }

    /**
     * Sends a Terminate for an error the peer caused (RFC 5040 §7), moves to TERMINATE, completes all
     * outstanding work in error and closes once the Terminate is flushed.
     */
    private void terminate(TerminateCause cause, DdpSegment offending, ReadRequestHeader readHeader, String what) {
        if (state == QpState.TERMINATE || state == QpState.ERROR) {
            return;
        }
        LOG.warn("{} peer {}: {}; sending Terminate {} and closing", ctx.channel(), ctx.channel().remoteAddress(),
                what, cause);
        state = QpState.TERMINATE;
        TerminateMessage t = TerminateMessage.forError(cause, offending, readHeader);
        ctx.writeAndFlush(t.toSegment(ctx.alloc())).addListener(ChannelFutureListener.CLOSE);
        flushAll(WcStatus.WR_FLUSH_ERR, "stream terminated: " + cause);
    }

    private void toError(WcStatus status, String why) {
        if (state == QpState.ERROR) {
            return;
        }
        state = QpState.ERROR;
        flushAll(status, why);
    }

    /** Completes every outstanding and queued request and every posted receive in error. */
    private void flushAll(WcStatus outstandingStatus, String why) {
        Outstanding o;
        while ((o = outstanding.poll()) != null) {
            if (o.pending != null) {
                o.pending.result = Completion.error(o.pending.wr.wrId(), opcodeOf(o.pending.wr), outstandingStatus, why);
            }
        }
        Pending p;
        while ((p = started.poll()) != null) {
            // requests handed to TCP whose write has not completed yet are flushed too
            Completion c = p.result != null ? p.result
                    : Completion.error(p.wr.wrId(), opcodeOf(p.wr), WcStatus.WR_FLUSH_ERR, why);
            p.result = c;
            if (!c.isSuccess() || p.wr.isSignaled()) {
                sendCq.add(c);
            }
        }
        SendRequest wr;
        while ((wr = sendQueue.poll()) != null) {
            sendCq.add(Completion.error(wr.wrId(), opcodeOf(wr), WcStatus.WR_FLUSH_ERR, why));
        }
        if (receives != null) {
            receives.flush(r -> recvCq.add(Completion.error(r.wrId(), WcOpcode.RECV, WcStatus.WR_FLUSH_ERR, why)));
        }
        RecvRequest r;
        while ((r = earlyReceives.poll()) != null) {
            recvCq.add(Completion.error(r.wrId(), WcOpcode.RECV, WcStatus.WR_FLUSH_ERR, why));
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (state == QpState.TERMINATE || state == QpState.ERROR) {
            // RFC 5040 §6.2.2: nothing after a Terminate
            if (!(msg instanceof DdpUntaggedSegment && ((DdpUntaggedSegment) msg).qn() == QN_TERMINATE)) {
                ReferenceCountUtil.release(msg);
                promise.tryFailure(new IllegalStateException("stream terminated"));
                return;
            }
        }
        ctx.write(msg, promise);
    }

    static WcOpcode opcodeOf(SendRequest wr) {
        switch (wr.kind()) {
            case RDMA_WRITE:
                return WcOpcode.RDMA_WRITE;
            case RDMA_READ:
                return WcOpcode.RDMA_READ;
            case IMMEDIATE_DATA:
                return WcOpcode.IMMEDIATE_DATA;
            case ATOMIC_FETCH_ADD:
                return WcOpcode.ATOMIC_FETCH_ADD;
            case ATOMIC_SWAP:
                return WcOpcode.ATOMIC_SWAP;
            case ATOMIC_COMPARE_SWAP:
                return WcOpcode.ATOMIC_COMPARE_SWAP;
            default:
                return WcOpcode.SEND;
        }
    }

    private static String hex(int stag) {
        return String.format("STag 0x%08x", stag);
    }

    /** A started send-queue request and, once known, its completion. */
    private static final class Pending {
        final SendRequest wr;
        Completion result;

        Pending(SendRequest wr) {
            this.wr = wr;
        }
    }

    /** An RDMA Read or atomic awaiting its response (ORD slot); {@code pending} is null for a Read RTR. */
    private static final class Outstanding {
        final Pending pending;
        final int sinkStag;
        final long sinkTo;
        final int size;
        final int atomicId;
        int received;

        private Outstanding(Pending pending, int sinkStag, long sinkTo, int size, int atomicId) {
            this.pending = pending;
            this.sinkStag = sinkStag;
            this.sinkTo = sinkTo;
            this.size = size;
            this.atomicId = atomicId;
        }

        static Outstanding read(Pending pending, int sinkStag, long sinkTo, int size) {
            return new Outstanding(pending, sinkStag, sinkTo, size, 0);
        }

        static Outstanding atomic(Pending pending, int id) {
            return new Outstanding(pending, 0, 0, 8, id);
        }
    }
}
