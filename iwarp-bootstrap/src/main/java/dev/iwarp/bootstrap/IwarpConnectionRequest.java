package dev.iwarp.bootstrap;

import dev.iwarp.mpa.MpaConnectRequest;
import dev.iwarp.mpa.MpaStartupFrame;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaEngine;
import io.netty.channel.Channel;

/**
 * An incoming iWARP connection whose MPA Request is valid: accept it with a protection domain and
 * completion queues (and reply Private Data), or reject it. Either may be called from any thread.
 */
public final class IwarpConnectionRequest {
    private final MpaConnectRequest mpa;

    IwarpConnectionRequest(MpaConnectRequest mpa) {
        this.mpa = mpa;
    }

    public Channel channel() {
        return mpa.channel();
    }

    /** The Initiator's ULP Private Data. */
    public byte[] privateData() {
        return mpa.privateData();
    }

    /** The whole MPA Request (revision, CRC and marker wishes, IRD/ORD). */
    public MpaStartupFrame request() {
        return mpa.request();
    }

    /**
     * Accepts: creates the queue pair (post its first receives right away, before the peer's first
     * Send can arrive) and sends the MPA Reply.
     */
    public QueuePair accept(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, byte[] replyPrivateData) {
        return accept(pd, sendCq, recvCq, replyPrivateData, -1, -1);
    }

    /**
     * As {@link #accept(ProtectionDomain, CompletionQueue, CompletionQueue, byte[])} with this
     * connection's IRD and ORD for the RFC 6581 negotiation (-1: the listener's settings).
     */
    public QueuePair accept(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, byte[] replyPrivateData,
                            int ird, int ord) {
        RdmaEngine engine = new RdmaEngine(pd, sendCq, recvCq);
        mpa.channel().pipeline().addAfter(IwarpPipeline.DDP, IwarpPipeline.RDMAP, engine);
        mpa.accept(replyPrivateData, ird, ord);
        return engine.queuePair();
    }

    /** Rejects with an MPA Reply R=1 and this Private Data, then closes the connection. */
    public void reject(byte[] replyPrivateData) {
        mpa.reject(replyPrivateData);
        mpa.channel().eventLoop().execute(() -> mpa.channel().close());
    }
}
