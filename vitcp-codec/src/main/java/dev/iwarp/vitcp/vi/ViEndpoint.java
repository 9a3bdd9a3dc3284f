package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.VitcpActiveHandler;
import dev.iwarp.vitcp.VitcpConfig;
import dev.iwarp.vitcp.VitcpConnectRequest;
import dev.iwarp.vitcp.VitcpConnection;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A Virtual Interface (VIA VI; the verbs QueuePair): send and receive work queues bound to completion queues and a
 * protection domain. Create it, post receives, then connect it (actively, {@link #newActiveHandler}, or by
 * accepting a request, {@link #accept}). Methods are thread-safe; work is handed to the connection's event loop.
 */
public final class ViEndpoint {
    private final ViProtectionDomain pd;
    private final ViCompletionQueue sendCq;
    private final ViCompletionQueue recvCq;
    private final VitcpConfig config;
    private final Object lock = new Object();
    private final List<ViRecvRequest> prePosted = new ArrayList<>();
    private ViEndpointHandler handler;
    private boolean handlerCreated;
    private volatile String failure;

    /** An unconnected VI endpoint: its protection domain, completion queues and attributes. */
    public ViEndpoint(ViProtectionDomain pd, ViCompletionQueue sendCq, ViCompletionQueue recvCq, VitcpConfig config) {
        this.pd = pd;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.config = config;
    }

    /** The protection domain of the endpoint's descriptors. */
    public ViProtectionDomain protectionDomain() {
        return pd;
    }

    /** The completion queue of send descriptors. */
    public ViCompletionQueue sendCq() {
        return sendCq;
    }

    /** The completion queue of receive descriptors. */
    public ViCompletionQueue recvCq() {
        return recvCq;
    }

    /** The VI attributes this endpoint connects with. */
    public VitcpConfig config() {
        return config;
    }

    /**
     * Posts a receive descriptor; allowed before the VI is connected (then reported in the CE segment). From any
     * thread, the descriptor is posted when this returns: a Send that arrives afterwards finds it [VIPL VipPostRecv].
     */
    public void postRecv(ViRecvRequest r) {
        ViEndpointHandler h;
        synchronized (lock) {
            h = handler;
            if (h == null) {
                prePosted.add(r);
                return;
            }
        }
        ChannelHandlerContext ctx = h.context();
        if (ctx.executor().inEventLoop()) {
            h.postRecv(r);
        } else {
            h.postRecvFromAnyThread(r);
            ctx.executor().execute(h::takePostedRecvs); // counts it in Rx Descriptors Posted (draft §3.2)
        }
    }

    /** Posts a send-queue descriptor. The VI must be connected. Its buffers must not change until it completes. */
    public void postSend(ViSendRequest r) {
        ViEndpointHandler h;
        synchronized (lock) {
            h = handler;
        }
        if (h == null) {
            throw new IllegalStateException("VI not connected");
        }
        run(h, () -> h.postSend(r));
    }

    /** Closes the VI connection (and its TCP connection); outstanding descriptors complete as FLUSHED. */
    public void disconnect() {
        ViEndpointHandler h;
        synchronized (lock) {
            h = handler;
        }
        if (h != null) {
            run(h, h::disconnect);
        }
    }

    /** Whether the endpoint is connected. */
    public boolean isConnected() {
        synchronized (lock) {
            return handler != null && failure == null;
        }
    }

    /**
     * Why the connection ended, or null: the first cause recorded (a protocol violation, a CRC error, an error the peer
     * reported, a TCP error or close, a local disconnect). Set before the descriptors complete FLUSHED, so a completion
     * listener can name it.
     */
    public String failure() {
        return failure;
    }

    /** The connection once connected, else null. */
    public VitcpConnection connection() {
        synchronized (lock) {
            return handler != null ? handler.connection() : null;
        }
    }

    /**
     * What the peer did to this VI so far (Writes placed, Reads answered, Sends received), or null before it
     * connected. Read it on the channel's event loop or once the channel closed.
     */
    public ViPeerActivity peerActivity() {
        ViEndpointHandler h;
        synchronized (lock) {
            h = handler;
        }
        return h == null ? null : h.rx().peerActivity();
    }

    /** The active startup handler for this VI (put it behind a {@code VitcpCodec}). */
    public VitcpActiveHandler newActiveHandler(byte[] localDiscriminator, byte[] remoteDiscriminator,
                                               boolean peerToPeer) {
        return newActiveHandler(config, localDiscriminator, remoteDiscriminator, peerToPeer);
    }

    VitcpActiveHandler newActiveHandler(VitcpConfig attemptConfig, byte[] localDiscriminator,
                                        byte[] remoteDiscriminator, boolean peerToPeer) {
        return new VitcpActiveHandler(attemptConfig, localDiscriminator, remoteDiscriminator, peerToPeer,
                this::prePostedReceives, this::connectedHandler);
    }

    /** Accepts a matched connect request onto this VI (VipConnectAccept). */
    public CompletableFuture<VitcpConnection> accept(VitcpConnectRequest request) {
        return accept(request, null);
    }

    /**
     * Accepts with {@code callingDiscriminator} in the ConnectAccept (see
     * {@link VitcpConnectRequest#accept(java.util.function.Function, java.util.function.IntSupplier, byte[])}).
     */
    public CompletableFuture<VitcpConnection> accept(VitcpConnectRequest request, byte[] callingDiscriminator) {
        return request.accept(this::connectedHandler, this::prePostedReceives, callingDiscriminator);
    }

    /** The TCP connection of this VI once connected (the verbs QueuePair's {@code channel()}), else null. */
    public Channel channel() {
        synchronized (lock) {
            return handler != null ? handler.context().channel() : null;
        }
    }

    /** The full-operation handler that replaces a startup handler; once per VI. */
    public ChannelHandler connectedHandler(VitcpConnection c) {
        synchronized (lock) {
            if (handlerCreated) {
                throw new IllegalStateException("VI already connected");
            }
            handlerCreated = true;
        }
        return new ViEndpointHandler(this, c);
    }

    int prePostedReceives() {
        synchronized (lock) {
            return prePosted.size();
        }
    }

    List<ViRecvRequest> attach(ViEndpointHandler h) {
        synchronized (lock) {
            handler = h;
            List<ViRecvRequest> l = new ArrayList<>(prePosted);
            prePosted.clear();
            return l;
        }
    }

    /** Records why the connection ended; the first cause stays (what follows from it says less). Event loop only. */
    void failed(String why) {
        if (failure == null) {
            failure = why;
        }
    }

    private static void run(ViEndpointHandler h, Runnable task) {
        ChannelHandlerContext ctx = h.context();
        if (ctx.executor().inEventLoop()) {
            task.run();
        } else {
            ctx.executor().execute(task);
        }
    }
}
