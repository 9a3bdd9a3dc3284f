package dev.iwarp.verbs;

import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.verbs.internal.QueuePairEngine;
import dev.iwarp.verbs.internal.VerbsAccess;
import io.netty.channel.Channel;
import io.netty.util.concurrent.Future;

/**
 * A queue pair (libibverbs ibv_qp): one iWARP stream (RDMAP over DDP over a framing such as MPA
 * over one TCP connection). {@link #postSend} and {@link #postRecv} may be called from any thread; the work runs
 * on the connection's event loop and completes on the send and receive completion queues in order.
 */
public final class QueuePair {
    static {
        VerbsAccess.install(new EngineAccess()); // the engine's access to this package (VerbsAccess.get)
    }

    private final QueuePairEngine engine;

    QueuePair(QueuePairEngine engine) {
        this.engine = engine;
    }

    /**
     * Posts a send-queue request. Requests posted before the stream is in RTS wait for it.
     *
     * @throws SendQueueFullException at once, from any thread, when {@link #sendQueueDepth()} requests are posted
     *                                and not completed yet; the request was not queued
     */
    public void postSend(SendRequest request) {
        engine.postSend(request);
    }

    /**
     * Posts a receive buffer for the next incoming Send (or RFC 7306 Immediate Data). As with
     * libibverbs, the receive is in effect when this returns, from any thread: a Send that arrives
     * afterwards finds it. Receives complete in posting order.
     */
    public void postRecv(RecvRequest request) {
        engine.postRecv(request);
    }

    /** The send-queue depth: requests posted and not completed at most (libibverbs {@code max_send_wr}). */
    public int sendQueueDepth() {
        return engine.sendQueueDepth();
    }

    /** Send-queue requests posted and not completed yet (any thread). */
    public int sendRequestsPosted() {
        return engine.sendRequestsPosted();
    }

    /**
     * Inbound RDMA Read and Atomic Requests holding an IRD slot until their response left (RFC 5040 §5.2). Confined
     * to the event loop like the rest of the stream: call it there (monitoring samples it from a task).
     */
    public int irdInUse() {
        return engine.irdInUse();
    }

    /** Outbound RDMA Read and Atomic Requests outstanding against ORD (RFC 5040 §5.2). On the event loop. */
    public int ordInUse() {
        return engine.ordInUse();
    }

    /**
     * Payload octets of messages the stream holds back from the lower layer (the channel was not writable, or
     * a Read Response waits for the read-response rate). On the event loop; walks the queue, so not per message.
     */
    public long queuedOctets() {
        return engine.queuedOctets();
    }

    public QpState state() {
        return engine.state();
    }

    public ProtectionDomain pd() {
        return engine.pd();
    }

    public CompletionQueue sendCq() {
        return engine.sendCq();
    }

    public CompletionQueue recvCq() {
        return engine.recvCq();
    }

    /** The channel carrying this stream, once attached. */
    public Channel channel() {
        return engine.channel();
    }

    /**
     * What the lower layer established (role, MULPDU, version, IRD/ORD, RTR, the peer's private data),
     * once established; {@code null} before. The framing's own outcome is a typed view, e.g.
     * {@code connectionParameters().framing(MpaParameters.class).crc()} over MPA.
     */
    public LlpParameters connectionParameters() {
        return engine.connectionParameters();
    }

    /** Completes when the stream reaches RTS; fails if startup fails or the peer rejects. */
    public Future<QueuePair> established() {
        return engine.established();
    }

    /**
     * The Terminate the peer sent (RFC 5040 §5.4), or null if none arrived. Use
     * {@link TerminateMessage#interpreted()} for its cause as the peer meant it (Linux siw lays the
     * control word out in a non-RFC bit order).
     */
    public TerminateMessage peerTerminate() {
        return engine.peerTerminate();
    }

    /**
     * What the peer did to us on this stream so far: RDMA Writes placed, Read Requests answered, Sends received.
     * Counted on the event loop: call it there (a completion callback, a close listener) or after the channel closed.
     */
    public PeerActivity peerActivity() {
        return engine.peerActivity();
    }

    /** Graceful close: requests already posted are sent, then TCP is closed (RFC 5040 §6.2.1). */
    public Future<Void> close() {
        return engine.close();
    }

    @Override
    public String toString() {
        return "QP{" + engine.channel() + " " + state() + "}";
    }
}
