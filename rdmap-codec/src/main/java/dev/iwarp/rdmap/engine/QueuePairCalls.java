package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.PeerActivity;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.internal.QueuePairEngine;
import io.netty.channel.Channel;
import io.netty.util.concurrent.Future;

/**
 * The engine's side of its {@link QueuePair}: each call the application makes, from any thread, carried out on
 * the stream's event loop (at once when already there).
 */
final class QueuePairCalls implements QueuePairEngine {
    private final RdmaEngine engine;

    QueuePairCalls(RdmaEngine engine) {
        this.engine = engine;
    }

    @Override
    public void postSend(SendRequest request) {
        engine.stream().takeSendSlot();
        if (engine.inEventLoop()) {
            engine.stream().requester().postSend(request); // e.g. from a completion listener: no task object
        } else {
            engine.submit(() -> engine.stream().requester().postSend(request));
        }
    }

    @Override
    public void postRecv(RecvRequest request) {
        Responder responder = engine.stream().responder();
        if (engine.inEventLoop()) {
            responder.takePosted(); // receives posted earlier from other threads keep their place
            responder.postRecv(request);
        } else {
            responder.postRecvFromAnyThread(request);
            engine.submit(responder::takePosted);
        }
    }

    @Override
    public int sendQueueDepth() {
        return engine.stream().sendQueueDepth();
    }

    @Override
    public int sendRequestsPosted() {
        return engine.stream().sendWrsPosted();
    }

    @Override
    public int irdInUse() {
        Responder r = engine.stream().responder();
        return r == null ? 0 : r.irdInUse();
    }

    @Override
    public int ordInUse() {
        Requester r = engine.stream().requester();
        return r == null ? 0 : r.ordInUse();
    }

    @Override
    public long queuedOctets() {
        return engine.stream().tx().queuedOctets();
    }

    @Override
    public QpState state() {
        return engine.stream().state();
    }

    @Override
    public ProtectionDomain pd() {
        return engine.stream().pd();
    }

    @Override
    public CompletionQueue sendCq() {
        return engine.stream().sendCq();
    }

    @Override
    public CompletionQueue recvCq() {
        return engine.stream().recvCq();
    }

    @Override
    public Channel channel() {
        return engine.channel();
    }

    @Override
    public LlpParameters connectionParameters() {
        return engine.stream().parameters();
    }

    @Override
    public Future<QueuePair> established() {
        return engine.established();
    }

    @Override
    public TerminateMessage peerTerminate() {
        return engine.stream().peerTerminate();
    }

    @Override
    public PeerActivity peerActivity() {
        return engine.stream().responder().peerActivity();
    }

    @Override
    public Future<Void> close() {
        return engine.closeGracefully();
    }
}
