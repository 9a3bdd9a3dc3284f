package dev.iwarp.mpa;

import dev.iwarp.framing.DuplexByteToMessageDecoder;
import dev.iwarp.framing.HeldWrites;
import dev.iwarp.framing.PeerAddress;
import dev.iwarp.framing.PendingStartup;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.Objects;

/**
 * MPA startup (RFC 5044 §7.1; RFC 6581; draft-ietf-rddp-mpa-01 §6.1 for Rev 0) for either role.
 *
 * <ul>
 *   <li><b>Initiator</b>: sends the Request when the channel is active, validates the Reply.</li>
 *   <li><b>Responder</b>: validates the Request and fires {@link MpaConnectRequest}; the application
 *       accepts or rejects it asynchronously, and the Reply is sent then.</li>
 * </ul>
 *
 * On success the handler puts an {@link MpaFramer} right after itself, fires one
 * {@link MpaStartupCompletionEvent} with the negotiated {@link MpaParameters}, removes itself and
 * hands any octets that arrived behind the startup frame to the framer, so no full-operation handler
 * ever sees startup octets. ULPDUs written before that are held and then framed in order.
 *
 * <p>Failures: an improperly formatted frame (wrong key, unsupported Rev, PD_Length over the limit,
 * an Initiator/Initiator mis-start) and the startup timeout close the connection (MPA error 4); a
 * Reply with R=1 ends MPA but leaves TCP open (RFC 5044 §7.1.2 rules 2-3); the RFC 6581 failures
 * (codes 6, 7) send a Terminate when {@link MpaSettings#terminateFactory()} is set, then close. Each
 * failure completes {@link #startupFuture()} and fires the completion event with the cause.
 */
public class MpaStartupHandler extends DuplexByteToMessageDecoder {
    private static final Logger LOG = LoggerFactory.getLogger(MpaStartupHandler.class);

    /** Name under which the framer is added when free. */
    public static final String FRAMER_NAME = "mpa-framer";

    private enum State {
        /** Not yet active. */
        IDLE,
        /** Responder: waiting for the MPA Request. */
        AWAIT_REQUEST,
        /** Responder: Request delivered to the ULP, waiting for accept/reject. */
        AWAIT_ULP_DECISION,
        /** Initiator: Request sent, waiting for the Reply. */
        AWAIT_REPLY,
        /** Startup over (success, rejection or failure). */
        DONE
    }

    private final MpaRole role;
    private final MpaSettings settings;
    private State state = State.IDLE;
    private ChannelHandlerContext ctx;
    /** The promise, the timer and the held writes; set once in a pipeline. */
    private PendingStartup<MpaParameters> pending;
    private MpaStartupFrame request;
    private boolean replyOctetsSeen;

    public MpaStartupHandler(MpaRole role, MpaSettings settings) {
        this.role = Objects.requireNonNull(role, "role");
        this.settings = Objects.requireNonNull(settings, "settings");
    }

    /** An Initiator with these settings. */
    public static MpaStartupHandler initiator(MpaSettings settings) {
        return new MpaStartupHandler(MpaRole.INITIATOR, settings);
    }

    /** A Responder with these settings. */
    public static MpaStartupHandler responder(MpaSettings settings) {
        return new MpaStartupHandler(MpaRole.RESPONDER, settings);
    }

    public MpaRole role() {
        return role;
    }

    public MpaSettings settings() {
        return settings;
    }

    /**
     * Completes with the negotiated parameters, or fails with {@link MpaRejectedException} or
     * {@link MpaException}. Available once the handler is in a pipeline.
     */
    public Future<MpaParameters> startupFuture() {
        return PendingStartup.futureOf(pending);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        this.pending = new PendingStartup<>(ctx);
        super.handlerAdded(ctx);
        if (ctx.channel().isActive()) {
            start(ctx);
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
        // RFC 5044 §7.1.2 rules 8 and 10: time out waiting for startup frames
        pending.startTimer(ctx, settings.startupTimeoutMillis(), this::onTimeout);
        if (role == MpaRole.INITIATOR) {
            request = MpaNegotiation.request(settings);
            state = State.AWAIT_REPLY;
            LOG.debug("{} MPA initiator sends {}", PeerAddress.of(ctx), request);
            writeFrame(ctx, request);
        } else {
            state = State.AWAIT_REQUEST;
        }
    }

    private void writeFrame(ChannelHandlerContext ctx, MpaStartupFrame frame) {
        ByteBuf buf = ctx.alloc().buffer(frame.encodedLength());
        frame.encode(buf);
        ctx.writeAndFlush(buf).addListener(f -> {
            if (!f.isSuccess() && state != State.DONE) {
                fail(ctx, new MpaException(MpaErrorCode.TCP_CONNECTION_LOST, "could not send the MPA "
                        + (frame.type() == MpaStartupFrame.Type.REQUEST ? "Request" : "Reply"), f.cause()), true);
            }
        });
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        try {
            switch (state) {
                case AWAIT_REQUEST: {
                    MpaStartupFrame frame = MpaStartupFrame.decode(in, settings.privateDataLimit());
                    if (frame == null) {
                        return;
                    }
                    MpaNegotiation.checkRequest(frame, settings);
                    request = frame;
                    if (frame.markers() && !settings.acceptMarkers()) {
                        refuseMarkers(ctx, frame);
                        return;
                    }
                    state = State.AWAIT_ULP_DECISION;
                    LOG.debug("{} MPA responder received {}", PeerAddress.of(ctx), frame);
                    ctx.fireUserEventTriggered(new MpaConnectRequest(this, ctx.channel(), frame));
                    return;
                }
                case AWAIT_REPLY: {
                    replyOctetsSeen |= in.isReadable();
                    MpaStartupFrame reply = MpaStartupFrame.decode(in, settings.privateDataLimit());
                    if (reply == null) {
                        return;
                    }
                    onReply(ctx, reply);
                    return;
                }
                case IDLE:
                case AWAIT_ULP_DECISION:
                case DONE:
                default:
                    // Octets behind the startup frame wait here and go to the framer (or, after a
                    // rejection, to the application) when this handler is removed.
                    return;
            }
        } catch (MpaException e) {
            in.skipBytes(in.readableBytes());
            fail(ctx, e, true);
        }
    }

    private void onReply(ChannelHandlerContext ctx, MpaStartupFrame reply) {
        MpaNegotiation.checkReply(request, reply, settings);
        LOG.debug("{} MPA initiator received {}", PeerAddress.of(ctx), reply);
        if (reply.rejected()) {
            // RFC 5044 §7.1.2 rule 3: exit MPA, leave TCP open for the ULP
            reject(ctx, new MpaRejectedException(reply, false));
            return;
        }
        MpaParameters params;
        try {
            params = MpaNegotiation.initiatorParameters(request, reply, settings,
                    Emss.of(ctx.channel(), settings.emss()));
        } catch (MpaException e) {
            failNegotiation(ctx, request, reply, e);
            return;
        }
        establish(ctx, params);
    }

    /**
     * Responder: a Request with M=1 while markers are not accepted. Answered as siw answers it (siw_cm.c,
     * protocol-based reject): the Request's header with the Reply key, R=1, M=0, C and Rev echoed, zero IRD/ORD words
     * if enhanced, no ULP data; then the connection is closed.
     */
    private void refuseMarkers(ChannelHandlerContext ctx, MpaStartupFrame frame) {
        MpaStartupFrame reply = MpaNegotiation.markersRefusal(frame);
        LOG.debug("{} MPA responder refuses markers: {}", PeerAddress.of(ctx), reply);
        writeFrame(ctx, reply);
        fail(ctx, new MpaException(MpaErrorCode.INVALID_STARTUP_FRAME, "Request asks for markers (M=1); this "
                + "Responder does not send them (as siw)"), false);
        ctx.writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER)
                .addListener(io.netty.channel.ChannelFutureListener.CLOSE); // once the Reply is on the wire
    }

    /** Called by {@link MpaConnectRequest} from any thread. */
    void decide(MpaConnectRequest connectRequest, boolean reject, byte[] privateData, int ird, int ord) {
        if (ctx.executor().inEventLoop()) {
            doDecide(connectRequest, reject, privateData, ird, ord);
        } else {
            ctx.executor().execute(() -> doDecide(connectRequest, reject, privateData, ird, ord));
        }
    }

    private void doDecide(MpaConnectRequest connectRequest, boolean reject, byte[] privateData, int ird, int ord) {
        if (state != State.AWAIT_ULP_DECISION || connectRequest.request() != request) {
            LOG.debug("{} ignoring late MPA accept/reject in state {}", PeerAddress.of(ctx), state);
            return;
        }
        int useIrd = ird >= 0 ? ird : settings.ird();
        int useOrd = ord >= 0 ? ord : settings.ord();
        MpaStartupFrame reply = MpaNegotiation.reply(request, settings, reject, privateData, useIrd, useOrd);
        LOG.debug("{} MPA responder sends {}", PeerAddress.of(ctx), reply);
        writeFrame(ctx, reply);
        if (reject) {
            // RFC 5044 §7.1.2 rule 2: exit MPA, TCP stays open for the ULP
            reject(ctx, new MpaRejectedException(reply, true));
            return;
        }
        establish(ctx, MpaNegotiation.responderParameters(request, reply, settings,
                Emss.of(ctx.channel(), settings.emss()), useIrd, useOrd));
    }

    private void establish(ChannelHandlerContext ctx, MpaParameters params) {
        finish();
        MpaFramer framer = installFramer(ctx, params);
        LOG.debug("{} MPA startup complete: {}", PeerAddress.of(ctx), params);
        pending.succeeded(ctx, params, MpaStartupCompletionEvent.success(params), framer,
                ctx.pipeline().context(framer));
        ctx.pipeline().remove(this); // forwards octets behind the startup frame to the framer
    }

    private MpaFramer installFramer(ChannelHandlerContext ctx, MpaParameters params) {
        MpaFramer framer = new MpaFramer(params);
        if (settings.emss() <= 0) {
            framer.followEmss();
        }
        HeldWrites.addFramerAfter(ctx, FRAMER_NAME, framer);
        return framer;
    }

    private void failNegotiation(ChannelHandlerContext ctx, MpaStartupFrame request, MpaStartupFrame reply,
                                 MpaException e) {
        // RFC 6581 §3-§4: the Initiator is in full operation; it reports the failure in a Terminate
        // (Layer 2 LLP, EType 0 MPA, code 6 or 7) as its first FPDU, then closes.
        finish();
        LOG.warn("peer {}: {}", PeerAddress.of(ctx), e.getMessage());
        pending.failed(ctx, e, MpaStartupCompletionEvent.failure(e));
        MpaTerminateFactory factory = settings.terminateFactory();
        if (factory != null) {
            MpaFramer framer = installFramer(ctx, MpaNegotiation.terminateParameters(request, reply, settings));
            ChannelHandlerContext framerCtx = ctx.pipeline().context(framer);
            ByteBuf terminate = factory.terminateUlpdu(ctx.alloc(), e.errorCode());
            ChannelPromise sent = framerCtx.newPromise();
            framer.write(framerCtx, terminate, sent);
            framer.flush(framerCtx);
            sent.addListener(f -> ctx.close()); // close once the Terminate is on the wire, not before
            return;
        }
        ctx.close();
    }

    private void reject(ChannelHandlerContext ctx, MpaRejectedException rejection) {
        finish();
        LOG.info("{} MPA startup rejected ({}); TCP left open", PeerAddress.of(ctx),
                rejection.rejectedLocally() ? "by the local ULP" : "by the peer");
        pending.failed(ctx, rejection, MpaStartupCompletionEvent.failure(rejection));
        ctx.pipeline().remove(this); // any further octets go to the application as plain bytes
    }

    private void fail(ChannelHandlerContext ctx, MpaException e, boolean close) {
        if (state == State.DONE) {
            return;
        }
        finish();
        LOG.warn("MPA startup with {} failed: {}{}", PeerAddress.of(ctx),
                e.getMessage(), close ? "; closing the connection" : "");
        pending.failed(ctx, e, MpaStartupCompletionEvent.failure(e));
        if (close) {
            ctx.close();
        }
    }

    private void finish() {
        state = State.DONE;
        request = null; // used only during startup; the framer and the layers above never need it
        pending.stopTimer();
    }

    private void onTimeout() {
        if (state == State.DONE) {
            return;
        }
        ByteBuf cumulation = internalBuffer();
        int have = cumulation == null ? 0 : cumulation.readableBytes();
        String waitingFor = state == State.AWAIT_ULP_DECISION ? "the local ULP to accept or reject the Request"
                : state == State.AWAIT_REPLY ? "the MPA Reply" : "the MPA Request";
        // RFC 5044 §7.1.2 rule 10; an incomplete frame is an improperly formatted one
        fail(ctx, new MpaException(MpaErrorCode.INVALID_STARTUP_FRAME, "startup timed out after "
                + settings.startupTimeoutMillis() + " ms waiting for " + waitingFor + " (" + have
                + " octets of an incomplete frame received)"), true);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (state != State.DONE && state != State.IDLE) {
            if (closedOnRev2Request()) {
                fail(ctx, new MpaRevisionRefusedException("peer closed the connection after our Rev 2 Request "
                        + "without a Reply; retry with Rev 1 (RFC 6581 §5)"), false);
            } else {
                fail(ctx, new MpaException(MpaErrorCode.TCP_CONNECTION_LOST,
                        "connection closed during MPA startup (" + state + ")"), false);
            }
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
        if (state != State.DONE && cause instanceof IOException) {
            // RST or similar during startup: MPA error 1 (RFC 5044 §8)
            fail(ctx, closedOnRev2Request()
                    ? new MpaRevisionRefusedException("connection reset after our Rev 2 Request ("
                    + cause.getMessage() + "); retry with Rev 1 (RFC 6581 §5)")
                    : new MpaException(MpaErrorCode.TCP_CONNECTION_LOST, "connection lost during MPA startup", cause),
                    true);
            return;
        }
        ctx.fireExceptionCaught(cause);
    }

    /** Initiator: the peer ended the connection after our Rev 2 Request and before any Reply octet (RFC 6581 §5). */
    private boolean closedOnRev2Request() {
        return role == MpaRole.INITIATOR && state == State.AWAIT_REPLY && request.revision() == 2
                && settings.rev1Fallback() && !replyOctetsSeen;
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        pending.abandon();
    }

    // ------------------------------------------------------------ outbound: hold ULPDUs until established

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (state == State.DONE) {
            ctx.write(msg, promise); // the framer's output, or plain octets after a rejection
            return;
        }
        pending.hold(ctx, msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (state == State.DONE) {
            ctx.flush();
            return;
        }
        pending.holdFlush();
    }
}
