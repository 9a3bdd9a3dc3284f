package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.VitcpConnection;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The receive queue of a connected VI: the receive descriptors posted, in order, and the Rx Descriptors Posted count
 * every segment we send reports (draft-dicecco-vitcp-01 §3.2). Part of {@link ViReceiver}; confined to the
 * channel's event loop apart from {@link #postFromAnyThread}.
 */
final class ViReceiveQueue {
    private final ViEndpointHandler owner;
    private final ViEndpoint endpoint;
    private final VitcpConnection conn;
    private final ArrayDeque<ViRecvRequest> posted = new ArrayDeque<>();
    /**
     * Receives posted from other threads, not yet taken on the event loop. A receive is posted when
     * {@code postRecv} returns [VIPL VipPostRecv]: a Send matched meanwhile takes these first.
     */
    private final Queue<ViRecvRequest> postedElsewhere = new ConcurrentLinkedQueue<>();
    private int localRxPosted;
    private boolean rxPostedDirty;

    ViReceiveQueue(ViEndpointHandler owner, ViEndpoint endpoint) {
        this.owner = owner;
        this.endpoint = endpoint;
        this.conn = owner.connection();
    }

    /** Takes the receives posted before the VI connected. */
    void attach(List<ViRecvRequest> prePosted) {
        posted.addAll(prePosted);
        localRxPosted = prePosted.size() & 0xFFFF;
        if (conn.remoteDescriptorFlowControl() && !prePosted.isEmpty()) {
            // receives posted after the CE segment went out are reported by the first NOP
            rxPostedDirty = true;
            owner.tx().schedulePump();
        }
    }

    /** From any thread: in effect at once, taken on the event loop by {@link #takePosted}. */
    void postFromAnyThread(ViRecvRequest r) {
        postedElsewhere.add(r);
    }

    /** Takes the receives posted from other threads, in order. On the event loop. */
    void takePosted() {
        ViRecvRequest r;
        while ((r = postedElsewhere.poll()) != null) {
            post(r);
        }
    }

    /** Consumes the receive descriptor the next Send (or RDMA Write with immediate data) fills, if any. */
    ViRecvRequest next() {
        takePosted();
        return posted.poll();
    }

    /** The receive descriptor {@link #next} would consume, left in place; null if none. */
    ViRecvRequest peek() {
        takePosted();
        return posted.peek();
    }

    void post(ViRecvRequest r) {
        if (owner.isFailed()) {
            endpoint.recvCq().add(new ViCompletion(r.wrId, ViOpcode.RECV, ViStatus.FLUSHED, 0, 0, false));
            return;
        }
        if (!ScatterGather.allValid(r.segments, endpoint.protectionDomain())) {
            endpoint.recvCq().add(new ViCompletion(r.wrId, ViOpcode.RECV, ViStatus.LOCAL_PROTECTION_ERROR, 0, 0,
                    false));
            return;
        }
        posted.add(r);
        // draft §3.2 "Rx Descriptors Posted": modulo 2^16 over the lifetime of the connection
        localRxPosted = (localRxPosted + 1) & 0xFFFF;
        rxPostedDirty = true;
        owner.tx().schedulePump();
    }

    /** Rx Descriptors Posted as the next segment reports it; clears the count's owed report. */
    int reportRxPosted() {
        rxPostedDirty = false;
        return localRxPosted;
    }

    int localRxPosted() {
        return localRxPosted;
    }

    /** Whether a descriptor was posted since the count was last reported. */
    boolean rxPostedDirty() {
        return rxPostedDirty;
    }

    /** Completes every posted receive descriptor with {@code status}, in order. */
    void flush(ViStatus status) {
        takePosted();
        ViRecvRequest r;
        while ((r = posted.poll()) != null) {
            endpoint.recvCq().add(new ViCompletion(r.wrId, ViOpcode.RECV, status, 0, 0, false));
        }
    }
}
