package dev.iwarp.verbs.internal;

import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.PeerActivity;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.channel.Channel;
import io.netty.util.concurrent.Future;

/**
 * Not API: the engine behind one {@link QueuePair}, which hands every call to it; each method does what
 * the {@link QueuePair} method of the same name promises (threads included). Implemented by the RDMA
 * engine, so that the verbs API depends on no engine class.
 */
public interface QueuePairEngine {
    void postSend(SendRequest request);

    void postRecv(RecvRequest request);

    int sendQueueDepth();

    int sendRequestsPosted();

    int irdInUse();

    int ordInUse();

    long queuedOctets();

    QpState state();

    ProtectionDomain pd();

    CompletionQueue sendCq();

    CompletionQueue recvCq();

    Channel channel();

    LlpParameters connectionParameters();

    Future<QueuePair> established();

    TerminateMessage peerTerminate();

    PeerActivity peerActivity();

    Future<Void> close();
}
