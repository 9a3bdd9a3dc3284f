package dev.iwarp.ift;

import dev.iwarp.framing.DuplexByteToMessageDecoder;
import dev.iwarp.framing.HeldWrites;
import dev.iwarp.framing.PeerAddress;
import dev.iwarp.framing.PendingStartup;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.Objects;

/**
 * The IFT adaption (IFT draft §4): the two-phase exchange of 64-octet indications, for either role.
 *
 * <ul>
 *   <li><b>Node A</b> sends phase 0 when the channel is active (or when the handler is added to an
 *       active channel, for a ULP that upgrades a streaming connection), then validates node B's
 *       phase 1.</li>
 *   <li><b>Node B</b> validates phase 0 and answers with phase 1. When phase 0 was well formed but is
 *       unacceptable (BC version, R mismatch, CRC policy) it still sends its phase 1, so that node A
 *       learns why, and then closes; a malformed phase 0 is not answered.</li>
 * </ul>
 *
 * A received indication is validated in this order: magic (A1; as soon as its first octets are in),
 * CRC (A2), version 0 (A4), phase (A5), BC version (A3), R (A6), CRC policy (A7, A8). Reserved flags,
 * reserved octets and the marker interval are ignored. No complete indication within the adaption
 * timeout is A9 (also how two node B's end), a FIN or RST before the end is A10. Every failure closes
 * the connection, completes {@link #adaptionFuture()} and fires one failed
 * {@link IftAdaptionCompletionEvent}.
 *
 * <p>On success the handler puts an {@link IftFramer} right after itself, fires one
 * {@link IftAdaptionCompletionEvent} with the {@link IftParameters}, removes itself and hands the
 * octets that arrived behind the peer's indication to the framer. ULPDUs written before that are held
 * (counted toward the channel's writability) and then framed in order; node B frames them right after
 * its phase 1, node A after validating phase 1 (it needs node B's VTag).
 */
public class IftAdaptionHandler extends DuplexByteToMessageDecoder {
    private static final Logger LOG = LoggerFactory.getLogger(IftAdaptionHandler.class);

    /** Name under which the framer is added when free. */
    public static final String FRAMER_NAME = "ift-framer";

    private enum State {
        /** Not yet active. */
        IDLE,
        /** Node B: waiting for phase 0. */
        AWAIT_PHASE0,
        /** Node A: phase 0 sent, waiting for phase 1. */
        AWAIT_PHASE1,
        /** Framer installed; this handler is being removed. */
        ESTABLISHED,
        /** The adaption failed; the connection is closing. */
        FAILED
    }

    private final IftSettings settings;
    private IftRole role;
    private State state = State.IDLE;
    private ChannelHandlerContext ctx;
    /** The promise, the timer and the held writes; set once in a pipeline. */
    private PendingStartup<IftParameters> pending;
    private IftAdaptionIndication local;
    private IftAdaptionException failure;

    /** A handler whose role comes from the settings (by default from the connection's direction). */
    public IftAdaptionHandler(IftSettings settings) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.role = settings.role().orElse(null);
    }

    /** Node A (sends phase 0) with these settings. */
    public static IftAdaptionHandler nodeA(IftSettings settings) {
        return new IftAdaptionHandler(settings.toBuilder().role(IftRole.NODE_A).build());
    }

    /** Node B (answers with phase 1) with these settings. */
    public static IftAdaptionHandler nodeB(IftSettings settings) {
        return new IftAdaptionHandler(settings.toBuilder().role(IftRole.NODE_B).build());
    }

    /** The settings this handler adapts with. */
    public IftSettings settings() {
        return settings;
    }

    /** The role; {@code null} until the channel is active when it follows the connection's direction. */
    public IftRole role() {
        return role;
    }

    /** Completes with the parameters or fails with an {@link IftAdaptionException}. Set once added. */
    public Future<IftParameters> adaptionFuture() {
        return PendingStartup.futureOf(pending);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        this.pending = new PendingStartup<>(ctx);
        super.handlerAdded(ctx);
        if (ctx.channel().isActive()) {
            start(ctx); // a ULP upgrade: the next octet each way is the indication's first
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        start(ctx);
        ctx.fireChannelActive();
    }

    private void start(ChannelHandlerContext ctx) {
        if (state != State.IDLE) {
            return;
        }
        if (role == null) {
            role = ctx.channel().parent() == null ? IftRole.NODE_A : IftRole.NODE_B;
        }
        pending.startTimer(ctx, settings.adaptionTimeoutMillis(), this::onTimeout);
        if (role == IftRole.NODE_A) {
            local = IftNegotiation.localIndication(role, settings, settings.vTagSource().getAsInt(), null);
            state = State.AWAIT_PHASE1;
            LOG.debug("{} IFT node A sends {}", PeerAddress.of(ctx), local);
            writeIndication(ctx, local);
        } else {
            state = State.AWAIT_PHASE0;
        }
    }

    private ChannelFuture writeIndication(ChannelHandlerContext ctx, IftAdaptionIndication indication) {
        ByteBuf buf = ctx.alloc().buffer(IftAdaptionIndication.LENGTH);
        indication.encode(buf);
        return ctx.writeAndFlush(buf).addListener(f -> {
            if (!f.isSuccess() && (state == State.AWAIT_PHASE0 || state == State.AWAIT_PHASE1)) {
                fail(ctx, new IftAdaptionException(IftError.ADAPTION_CONNECTION_LOST, "could not send phase "
                        + indication.phase(), f.cause()), null);
            }
        });
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (state != State.AWAIT_PHASE0 && state != State.AWAIT_PHASE1) {
            if (state == State.FAILED) {
                in.skipBytes(in.readableBytes());
            }
            // IDLE/ESTABLISHED: the octets wait and go to the framer when this handler is removed
            return;
        }
        IftAdaptionIndication peer;
        try {
            peer = IftAdaptionIndication.decode(in);
        } catch (IftAdaptionException e) {
            in.skipBytes(in.readableBytes());
            fail(ctx, e, ctx.newSucceededFuture());
            return;
        }
        if (peer == null) {
            return;
        }
        if (role == IftRole.NODE_B) {
            local = IftNegotiation.localIndication(role, settings, settings.vTagSource().getAsInt(), peer);
        }
        try {
            IftNegotiation.validate(role, peer, local, settings);
        } catch (IftAdaptionException e) {
            in.skipBytes(in.readableBytes());
            if (role == IftRole.NODE_B && e.error().isWellFormedRejection()) {
                // IFT draft §4.2 R/HC/PC/IH/IP "close", decided (Q10): answer a well-formed phase 0 first
                LOG.debug("{} IFT node B answers the rejected phase 0 with {}", PeerAddress.of(ctx), local);
                fail(ctx, e, writeIndication(ctx, local));
            } else {
                fail(ctx, e, ctx.newSucceededFuture());
            }
            return;
        }
        logIgnoredFields(ctx, peer);
        if (role == IftRole.NODE_B) {
            LOG.debug("{} IFT node B received {}, sends {}", PeerAddress.of(ctx), peer, local);
            writeIndication(ctx, local);
        } else {
            LOG.debug("{} IFT node A received {}", PeerAddress.of(ctx), peer);
        }
        establish(ctx, IftParameters.of(role, local, peer, settings));
    }

    private static void logIgnoredFields(ChannelHandlerContext ctx, IftAdaptionIndication peer) {
        if (LOG.isDebugEnabled() && (peer.reservedFlags() != 0 || peer.hasNonZeroReservedOctets()
                || peer.markerInterval() != 0 || peer.willSendMarkers() || peer.wantsMarkers())) {
            // IFT draft §4.2: reserved bits are ignored by the receiver; markers are never enabled here
            LOG.debug("{} IFT peer indication has reserved flags 0x{}, {}reserved octets, marker interval {}, SM={} RM={}:"
                            + " ignored", ctx.channel(), Integer.toHexString(peer.reservedFlags()),
                    peer.hasNonZeroReservedOctets() ? "non-zero " : "zero ", peer.markerInterval(),
                    peer.willSendMarkers() ? 1 : 0, peer.wantsMarkers() ? 1 : 0);
        }
    }

    private void establish(ChannelHandlerContext ctx, IftParameters params) {
        pending.stopTimer();
        state = State.ESTABLISHED;
        IftFramer framer = new IftFramer(params);
        ChannelHandlerContext framerCtx = HeldWrites.addFramerAfter(ctx, FRAMER_NAME, framer);
        LOG.debug("{} IFT adaption complete: {}", PeerAddress.of(ctx), params);
        pending.succeeded(ctx, params, IftAdaptionCompletionEvent.success(params), framer, framerCtx);
        ctx.pipeline().remove(this); // forwards the octets behind the indication to the framer
    }

    /**
     * Ends the adaption with {@code e}: one log line, pending writes failed, the promise and the event,
     * then the connection closed once {@code closeAfter} completes ({@code null}: already closed).
     */
    private void fail(ChannelHandlerContext ctx, IftAdaptionException e, ChannelFuture closeAfter) {
        if (state == State.ESTABLISHED || state == State.FAILED) {
            return;
        }
        pending.stopTimer();
        state = State.FAILED;
        failure = e;
        if (e.error() == IftError.ADAPTION_CONNECTION_LOST) {
            LOG.info("IFT adaption with {}: {}", PeerAddress.of(ctx), e.getMessage());
        } else {
            LOG.warn("IFT adaption with {} failed: {}; closing the connection",
                    PeerAddress.of(ctx), e.getMessage());
        }
        pending.failed(ctx, e, IftAdaptionCompletionEvent.failure(e));
        if (closeAfter != null) {
            closeAfter.addListener(ChannelFutureListener.CLOSE);
        }
    }

    private void onTimeout() {
        if (state != State.AWAIT_PHASE0 && state != State.AWAIT_PHASE1) {
            return;
        }
        fail(ctx, new IftAdaptionException(IftError.ADAPTION_TIMEOUT, "no complete phase " + role.expectsPhase()
                + " indication within " + settings.adaptionTimeoutMillis() + " ms (" + received()
                + " of 64 octets received)"), ctx.newSucceededFuture());
    }

    private int received() {
        ByteBuf cumulation = internalBuffer();
        return cumulation == null ? 0 : cumulation.readableBytes();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (state == State.AWAIT_PHASE0 || state == State.AWAIT_PHASE1) {
            fail(ctx, new IftAdaptionException(IftError.ADAPTION_CONNECTION_LOST, "the peer closed the connection while"
                    + " node " + (role == IftRole.NODE_A ? "A" : "B") + " waited for phase " + role.expectsPhase()
                    + " (" + received() + " of 64 octets received)"), null);
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
        if (cause instanceof IOException && (state == State.AWAIT_PHASE0 || state == State.AWAIT_PHASE1)) {
            fail(ctx, new IftAdaptionException(IftError.ADAPTION_CONNECTION_LOST, "connection lost during the adaption: "
                    + cause.getMessage(), cause), ctx.newSucceededFuture());
            return;
        }
        ctx.fireExceptionCaught(cause);
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        pending.abandon();
    }

    // ------------------------------------------------------------ outbound: hold ULPDUs until established

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        switch (state) {
            case ESTABLISHED:
                ctx.write(msg, promise); // the framer's output
                return;
            case FAILED:
                ReferenceCountUtil.release(msg);
                promise.setFailure(failure);
                return;
            default:
                pending.hold(ctx, msg, promise); // counts toward writability
        }
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (state == State.ESTABLISHED || state == State.FAILED) {
            ctx.flush();
            return;
        }
        pending.holdFlush();
    }
}
