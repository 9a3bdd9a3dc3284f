package dev.iwarp.vitcp;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.SocketAddress;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.IntSupplier;

/**
 * Startup handler of the passive end, one per accepted TCP connection on the listening port: the state machine of
 * draft-dicecco-vitcp-01 §4.3 (Incoming, Matching, Pending Accept, Connected). Matches the called discriminator in
 * a {@link VitcpListenerTable} (ConnectNoMatch when nothing matches), rejects a ConnectRequest whose reliability
 * level or peer-to-peer bit differ (§3.3), otherwise hands the decision to the application, which accepts or
 * rejects asynchronously. On accept it negotiates MTU and read window down, switches CRC on when both CE frames
 * carry the option (§3.6) and replaces itself with the full-operation handler.
 */
public final class VitcpPassiveHandler extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(VitcpPassiveHandler.class);

    /** §4.3 states (Listening belongs to the server channel, not to this per-connection handler). */
    public enum State {
        INCOMING,
        MATCHING,
        PENDING_ACCEPT,
        CONNECTED,
        DISCONNECTED
    }

    private final VitcpListenerTable listeners;
    private final VitcpConfig portConfig;
    private State state = State.INCOMING;
    private ScheduledFuture<?> timeout;
    private ChannelHandlerContext ctx;

    /** @param portConfig the listening port's settings: incoming timeout and CRC mode of its codec */
    public VitcpPassiveHandler(VitcpListenerTable listeners, VitcpConfig portConfig) {
        this.listeners = listeners;
        this.portConfig = portConfig;
    }

    public State state() {
        return state;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        // §4.3 Incoming: "Timeout - close TCP connection"
        timeout = ctx.executor().schedule(() -> {
            if (state == State.INCOMING) {
                log.info("VI/TCP {}: no ConnectRequest within {} ms; closing", VitcpNegotiation.describe(ctx),
                        portConfig.incomingTimeout().toMillis());
                disconnect();
            }
        }, portConfig.incomingTimeout().toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ViSegment s)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            switch (state) {
                case INCOMING -> incoming(s);
                case DISCONNECTED -> { }
                default -> {
                    // §4.1: the active end sends nothing after its ConnectRequest until ConnectAccept
                    log.warn("VI/TCP {}: peer sent {} in state {}; closing", VitcpNegotiation.describe(ctx),
                            s.type(), state);
                    disconnect();
                }
            }
        } finally {
            ReferenceCountUtil.release(s);
        }
    }

    private void incoming(ViSegment s) {
        if (s.type() != ViSegmentType.CONNECT_REQUEST) {
            log.warn("VI/TCP {}: peer sent {} instead of ConnectRequest; closing", VitcpNegotiation.describe(ctx),
                    s.type());
            disconnect();
            return;
        }
        if (s.crcError()) {
            log.warn("VI/TCP {}: ConnectRequest with a bad CRC; closing", VitcpNegotiation.describe(ctx));
            disconnect();
            return;
        }
        state = State.MATCHING;
        cancelTimeout();
        ViCeHeader request = s.ceHeader();
        VitcpListenerTable.Registration r = listeners.match(request.calledDiscriminator());
        if (r == null) {
            // §4.3 Matching: "No Matching Discriminator - Send Connect NoMatch; close TCP connection"
            log.info("VI/TCP {}: no listener for discriminator {}; ConnectNoMatch", VitcpNegotiation.describe(ctx),
                    HexFormat.of().formatHex(request.calledDiscriminator()));
            refuse(ViSegmentType.CONNECT_NO_MATCH, portConfig, request);
            return;
        }
        String reason = VitcpNegotiation.rejectReason(r.config(), r.peerToPeer(), request);
        if (reason != null) {
            log.info("VI/TCP {}: ConnectReject: {}", VitcpNegotiation.describe(ctx), reason);
            refuse(ViSegmentType.CONNECT_REJECT, r.config(), request);
            return;
        }
        state = State.PENDING_ACCEPT;
        r.listener().connectRequested(new Request(r, request, s.rxDescriptorsPosted()));
    }

    private void refuse(ViSegmentType type, VitcpConfig config, ViCeHeader request) {
        state = State.DISCONNECTED;
        cancelTimeout();
        ctx.writeAndFlush(VitcpNegotiation.refusal(type, config, request)).addListener(ChannelFutureListener.CLOSE);
    }

    private void disconnect() {
        state = State.DISCONNECTED;
        cancelTimeout();
        ctx.close();
    }

    private void cancelTimeout() {
        if (timeout != null) {
            timeout.cancel(false);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (state != State.CONNECTED) {
            state = State.DISCONNECTED;
        }
        cancelTimeout();
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof VitcpProtocolException e) {
            log.warn("VI/TCP {}: bad segment during connection establishment: {}; closing",
                    VitcpNegotiation.describe(ctx), e.getMessage());
        } else {
            log.debug("VI/TCP {}: {}", VitcpNegotiation.describe(ctx), cause.toString());
        }
        disconnect();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        cancelTimeout();
    }

    private final class Request implements VitcpConnectRequest {
        private final VitcpListenerTable.Registration registration;
        private final ViCeHeader request;
        private final int remoteRxPosted;

        Request(VitcpListenerTable.Registration registration, ViCeHeader request, int remoteRxPosted) {
            this.registration = registration;
            this.request = request;
            this.remoteRxPosted = remoteRxPosted;
        }

        @Override
        public SocketAddress remoteAddress() {
            return ctx.channel().remoteAddress();
        }

        @Override
        public io.netty.channel.Channel channel() {
            return ctx.channel();
        }

        @Override
        public ViCeHeader ceHeader() {
            return request;
        }

        @Override
        public int remoteRxDescriptorsPosted() {
            return remoteRxPosted;
        }

        @Override
        public CompletableFuture<VitcpConnection> accept(Function<VitcpConnection, ChannelHandler> connectedHandler,
                                                         IntSupplier rxDescriptorsPosted, byte[] callingDiscriminator) {
            if (callingDiscriminator != null && callingDiscriminator.length > ViCeHeader.MAX_DISCRIMINATOR_LENGTH) {
                // §3.3: the 64-octet field sets the maximum discriminator length
                throw new IllegalArgumentException("discriminator longer than 64 octets");
            }
            byte[] disc = callingDiscriminator != null ? callingDiscriminator.clone() : registration.discriminator();
            CompletableFuture<VitcpConnection> f = new CompletableFuture<>();
            if (ctx.executor().inEventLoop()) {
                doAccept(connectedHandler, rxDescriptorsPosted, disc, f);
            } else {
                ctx.executor().execute(() -> doAccept(connectedHandler, rxDescriptorsPosted, disc, f));
            }
            return f;
        }

        private void doAccept(Function<VitcpConnection, ChannelHandler> connectedHandler, IntSupplier rxPosted,
                              byte[] callingDiscriminator, CompletableFuture<VitcpConnection> f) {
            if (state != State.PENDING_ACCEPT || !ctx.channel().isActive()) {
                f.completeExceptionally(new VitcpConnectException(VitcpConnectException.Reason.CONNECTION_CLOSED,
                        "connection request no longer pending (" + state + ")"));
                return;
            }
            VitcpConfig config = registration.config();
            // §4.3 "VipConnectAccept - ConnectAccept"
            ViSegment accept = VitcpNegotiation.connectAccept(config, registration.peerToPeer(),
                    callingDiscriminator, request, rxPosted != null ? rxPosted.getAsInt() : 0);
            ViCeHeader sent = accept.ceHeader();
            VitcpConnection c = new VitcpConnection(false, config.reliabilityLevel(), (int) sent.mtuSize(),
                    sent.rdmaReadWindow(), sent.crcOption() && request.crcOption(), portConfig.crcMode(),
                    sent.callingAttributes(), request.callingAttributes(), sent.callingDiscriminator(),
                    request.callingDiscriminator(), remoteRxPosted, request.hasOption(ViCeOption.URGENT_MARKER));
            state = State.CONNECTED;
            ctx.writeAndFlush(accept);
            // §3.5: every later segment has a trailer iff both CE frames carried the CRC option
            VitcpCodec codec = ctx.pipeline().get(VitcpCodec.class);
            if (codec != null) {
                codec.crcEnabled(c.crcEnabled());
            }
            ChannelHandler next = connectedHandler != null ? connectedHandler.apply(c) : null;
            if (next != null) {
                ctx.pipeline().replace(VitcpPassiveHandler.this, null, next);
            } else {
                ctx.pipeline().remove(VitcpPassiveHandler.this);
            }
            log.debug("VI/TCP {} accepted: {}", VitcpNegotiation.describe(ctx), c);
            ctx.pipeline().fireUserEventTriggered(c);
            f.complete(c);
        }

        @Override
        public void reject() {
            Runnable r = () -> {
                if (state == State.PENDING_ACCEPT) {
                    refuse(ViSegmentType.CONNECT_REJECT, registration.config(), request);
                }
            };
            if (ctx.executor().inEventLoop()) {
                r.run();
            } else {
                ctx.executor().execute(r);
            }
        }
    }
}
