package dev.iwarp.vitcp;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.IntSupplier;

/**
 * Startup handler of the active end: the state machine of draft-dicecco-vitcp-01 §4.2. Sits behind a
 * {@link VitcpCodec}; when the TCP connection is up it sends ConnectRequest, waits for ConnectAccept, checks it
 * (§3.3), switches the codec's CRC on when both CE frames carried the option (§3.6), reports the
 * {@link VitcpConnection} (result and user event) and replaces itself with the full-operation handler.
 * ConnectReject, ConnectNoMatch, the timeout, a TCP close or bad input end in Disconnected with the TCP
 * connection closed and the result failed with a {@link VitcpConnectException}.
 */
public final class VitcpActiveHandler extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(VitcpActiveHandler.class);

    /** §4.2 states. */
    public enum State {
        DISCONNECTED,
        CONNECTING,
        PENDING_ACCEPT,
        CONNECTED
    }

    private final VitcpConfig config;
    private final byte[] localDiscriminator;
    private final byte[] remoteDiscriminator;
    private final boolean peerToPeer;
    private final IntSupplier rxDescriptorsPosted;
    private final Function<VitcpConnection, ChannelHandler> connectedHandler;
    private final CompletableFuture<VitcpConnection> result = new CompletableFuture<>();
    private State state = State.CONNECTING;
    private ViCeHeader sent;
    private ScheduledFuture<?> timeout;

    /**
     * @param connectedHandler builds the handler that replaces this one in Connected (may return null: none)
     * @param rxDescriptorsPosted receives posted before the connection exists (reported in the ConnectRequest)
     */
    public VitcpActiveHandler(VitcpConfig config, byte[] localDiscriminator, byte[] remoteDiscriminator,
                              boolean peerToPeer, IntSupplier rxDescriptorsPosted,
                              Function<VitcpConnection, ChannelHandler> connectedHandler) {
        this.config = config;
        this.localDiscriminator = localDiscriminator.clone();
        this.remoteDiscriminator = remoteDiscriminator.clone();
        this.peerToPeer = peerToPeer;
        this.rxDescriptorsPosted = rxDescriptorsPosted != null ? rxDescriptorsPosted : () -> 0;
        this.connectedHandler = connectedHandler;
    }

    public CompletableFuture<VitcpConnection> result() {
        return result;
    }

    public State state() {
        return state;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        // §4.2: the timeout covers Connecting and Pending Accept
        timeout = ctx.executor().schedule(() -> fail(ctx, new VitcpConnectException(
                VitcpConnectException.Reason.TIMEOUT, "no ConnectAccept from " + VitcpNegotiation.describe(ctx)
                + " within " + config.connectTimeout().toMillis() + " ms")),
                config.connectTimeout().toNanos(), TimeUnit.NANOSECONDS);
        if (ctx.channel().isActive()) {
            sendRequest(ctx);
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (state == State.CONNECTING) {
            sendRequest(ctx);
        }
        ctx.fireChannelActive();
    }

    private void sendRequest(ChannelHandlerContext ctx) {
        if (state != State.CONNECTING) {
            return;
        }
        // §4.2 "TCP connection established - ConnectRequest"
        ViSegment request = VitcpNegotiation.connectRequest(config, localDiscriminator, remoteDiscriminator,
                peerToPeer, rxDescriptorsPosted.getAsInt());
        sent = request.ceHeader();
        state = State.PENDING_ACCEPT;
        ctx.writeAndFlush(request).addListener((ChannelFutureListener) f -> {
            if (!f.isSuccess()) {
                fail(ctx, new VitcpConnectException(VitcpConnectException.Reason.CONNECTION_CLOSED,
                        "could not send ConnectRequest", f.cause()));
            }
        });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ViSegment s)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            if (state != State.PENDING_ACCEPT) {
                return; // after a failure: drop what is still in flight
            }
            if (s.trailer() && s.crcError()) {
                protocolError(ctx, "peer sent " + s.type() + " with a bad CRC");
                return;
            }
            switch (s.type()) {
                case CONNECT_ACCEPT -> accepted(ctx, s);
                case CONNECT_REJECT -> fail(ctx, new VitcpConnectException(VitcpConnectException.Reason.REJECTED,
                        VitcpNegotiation.describe(ctx) + " sent ConnectReject"));
                case CONNECT_NO_MATCH -> fail(ctx, new VitcpConnectException(VitcpConnectException.Reason.NO_MATCH,
                        VitcpNegotiation.describe(ctx) + " sent ConnectNoMatch"));
                default -> protocolError(ctx, "peer sent " + s.type() + " while Pending Accept");
            }
        } finally {
            ReferenceCountUtil.release(s);
        }
    }

    private void accepted(ChannelHandlerContext ctx, ViSegment s) {
        String violation = VitcpNegotiation.acceptViolation(config, peerToPeer, s.ceHeader());
        if (violation != null) {
            log.warn("VI/TCP {}: ConnectAccept refused: {}", VitcpNegotiation.describe(ctx), violation);
            fail(ctx, new VitcpConnectException(VitcpConnectException.Reason.ATTRIBUTE_MISMATCH, violation));
            return;
        }
        VitcpConnection c = VitcpNegotiation.connection(true, config, sent, s);
        state = State.CONNECTED;
        cancelTimeout();
        VitcpCodec codec = ctx.pipeline().get(VitcpCodec.class);
        if (codec != null) {
            codec.crcEnabled(c.crcEnabled());
        }
        log.debug("VI/TCP {} connected: {}", VitcpNegotiation.describe(ctx), c);
        ChannelHandler next = connectedHandler != null ? connectedHandler.apply(c) : null;
        if (next != null) {
            ctx.pipeline().replace(this, null, next);
        } else {
            ctx.pipeline().remove(this);
        }
        ctx.pipeline().fireUserEventTriggered(c);
        result.complete(c);
    }

    private void protocolError(ChannelHandlerContext ctx, String what) {
        log.warn("VI/TCP {}: {}; closing", VitcpNegotiation.describe(ctx), what);
        fail(ctx, new VitcpConnectException(VitcpConnectException.Reason.PROTOCOL_ERROR, what));
    }

    private void fail(ChannelHandlerContext ctx, VitcpConnectException e) {
        if (state == State.CONNECTED || state == State.DISCONNECTED) {
            return;
        }
        state = State.DISCONNECTED;
        cancelTimeout();
        log.debug("VI/TCP active connect to {} failed: {}", VitcpNegotiation.describe(ctx), e.getMessage());
        // §4.2: every failure edge closes the TCP connection
        ctx.close();
        result.completeExceptionally(e);
    }

    private void cancelTimeout() {
        if (timeout != null) {
            timeout.cancel(false);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        fail(ctx, new VitcpConnectException(VitcpConnectException.Reason.CONNECTION_CLOSED,
                "TCP connection closed in state " + state));
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof VitcpProtocolException e) {
            log.warn("VI/TCP {}: bad segment while Pending Accept: {}", VitcpNegotiation.describe(ctx), e.getMessage());
            fail(ctx, new VitcpConnectException(VitcpConnectException.Reason.PROTOCOL_ERROR, e.getMessage(), e));
        } else {
            fail(ctx, new VitcpConnectException(VitcpConnectException.Reason.CONNECTION_CLOSED, "I/O error", cause));
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        cancelTimeout();
    }
}
