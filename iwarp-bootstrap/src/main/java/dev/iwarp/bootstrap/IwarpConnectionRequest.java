package dev.iwarp.bootstrap;

import dev.iwarp.rdmap.engine.RdmaEngine;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import io.netty.channel.Channel;

import java.util.Objects;

/**
 * An incoming iWARP connection whose framing startup so far is valid (over MPA: a valid MPA
 * Request): accept it with a protection domain and completion queues (and reply private data), or
 * reject it. Either may be called from any thread, exactly once.
 */
public final class IwarpConnectionRequest {

    /** What a framing's adapter supplies: the request as received, and how to answer it. */
    interface Answer {
        /** The Initiator's private data (empty when the framing carries none). */
        byte[] privateData();

        /** The framing's own view of the request (over MPA: the {@code MpaStartupFrame}). */
        Object request();

        /** Completes startup; {@code ird} and {@code ord} of -1 mean the listener's settings. */
        void accept(byte[] replyPrivateData, int ird, int ord);

        /** Refuses the connection in the framing's way (over MPA: a Reply with R=1). */
        void reject(byte[] replyPrivateData);
    }

    private final Channel channel;
    private final Answer answer;
    private int sendQueueDepth;
    private long readResponseRate = -1;

    IwarpConnectionRequest(Channel channel, Answer answer) {
        this.channel = Objects.requireNonNull(channel, "channel");
        this.answer = Objects.requireNonNull(answer, "answer");
    }

    /** The TCP connection the request arrived on. */
    public Channel channel() {
        return channel;
    }

    /** The Initiator's ULP private data (empty when the framing carries none). A copy. */
    public byte[] privateData() {
        return answer.privateData();
    }

    /**
     * The framing's own view of the request, e.g. {@code request(MpaStartupFrame.class)} for the MPA
     * Request with its revision, CRC and marker wishes and IRD/ORD.
     *
     * @throws IllegalStateException when the connection runs over another framing
     */
    public <T> T request(Class<T> type) {
        Object r = answer.request();
        if (!type.isInstance(r)) {
            throw new IllegalStateException("the request is a " + r.getClass().getSimpleName() + ", not a "
                    + type.getSimpleName());
        }
        return type.cast(r);
    }

    /**
     * The accepted queue pair's send-queue depth (libibverbs {@code max_send_wr}); default: the device's
     * ({@code RdmaDevice.DEFAULT_SEND_QUEUE_DEPTH}, 1024). Before {@code accept}.
     */
    public IwarpConnectionRequest sendQueueDepth(int requests) {
        if (requests < 1) {
            throw new IllegalArgumentException("send queue depth " + requests);
        }
        this.sendQueueDepth = requests;
        return this;
    }

    /**
     * Octets per second of RDMA Read Responses the accepted queue pair sends at most (0: no limit); default: the
     * device's ({@code RdmaDevice.setReadResponseRate}). Before {@code accept}.
     */
    public IwarpConnectionRequest readResponseRate(long octetsPerSecond) {
        if (octetsPerSecond < 0) {
            throw new IllegalArgumentException("read response rate " + octetsPerSecond);
        }
        this.readResponseRate = octetsPerSecond;
        return this;
    }

    /**
     * Accepts: creates the queue pair (post its first receives right away, before the peer's first
     * Send can arrive) and completes the framing's startup (over MPA: sends the Reply).
     */
    public QueuePair accept(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, byte[] replyPrivateData) {
        return accept(pd, sendCq, recvCq, replyPrivateData, -1, -1);
    }

    /**
     * As {@link #accept(ProtectionDomain, CompletionQueue, CompletionQueue, byte[])} with this
     * connection's IRD and ORD (-1: the listener's settings), for framings that negotiate them (MPA
     * Rev 2, RFC 6581).
     */
    public QueuePair accept(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, byte[] replyPrivateData,
                            int ird, int ord) {
        RdmaEngine engine = new RdmaEngine(pd, sendCq, recvCq);
        if (sendQueueDepth > 0) {
            engine.sendQueueDepth(sendQueueDepth);
        }
        if (readResponseRate >= 0) {
            engine.readResponseRate(readResponseRate);
        }
        IwarpPipeline.bindEngine(channel.pipeline(), engine);
        answer.accept(replyPrivateData, ird, ord);
        return engine.queuePair();
    }

    /** Rejects (over MPA: a Reply with R=1 and this private data), then closes the connection. */
    public void reject(byte[] replyPrivateData) {
        answer.reject(replyPrivateData);
        channel.eventLoop().execute(channel::close);
    }
}
