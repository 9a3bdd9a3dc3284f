package dev.iwarp.bootstrap;

import dev.iwarp.ddp.llp.LlpException;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.LowerLayer;
import dev.iwarp.ift.IftAdaptionCompletionEvent;
import dev.iwarp.ift.IftFramer;
import dev.iwarp.ift.IftFramingException;
import dev.iwarp.ift.IftMode;
import dev.iwarp.ift.IftParameters;
import dev.iwarp.ift.IftRole;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;

import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * Binds IFT to DDP's lower-layer contract: the {@link IftAdaptionCompletionEvent} becomes an
 * {@link LlpStartupEvent} (fired first; the IFT event follows), an {@link IftFramingException} becomes
 * an {@link LlpException} (Layer 2, EType 0, the code IFT names: 0x02 CRC, 0x03 framing, 0x01 lost),
 * and the {@link IftFramer} serves as the {@link LowerLayer}.
 *
 * <p>On node B the adaption completes without asking the ULP (IFT has no request/reply), so the
 * adapter asks then: the connection reaches {@code onRequest} as an {@link IwarpConnectionRequest},
 * and the stream starts only when it is accepted. ULPDUs node A sends meanwhile are held (and the
 * channel stops reading) until the decision. A stream in IFT's DDP mode (both R bits clear: no RDMAP)
 * is refused.
 */
final class IftLlpAdapter extends ChannelInboundHandlerAdapter {
    private final IftFraming framing;
    private final Consumer<IwarpConnectionRequest> onRequest;
    private ChannelHandlerContext ctx;
    /** Node B, adaption done, not yet accepted: the startup event waits here, and ULPDUs behind it. */
    private LlpStartupEvent pendingStartup;
    private ArrayDeque<Object> held;

    IftLlpAdapter(IftFraming framing, Consumer<IwarpConnectionRequest> onRequest) {
        this.framing = framing;
        this.onRequest = onRequest;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IftAdaptionCompletionEvent) {
            IftAdaptionCompletionEvent e = (IftAdaptionCompletionEvent) evt;
            if (!e.isSuccess()) {
                ctx.fireUserEventTriggered(LlpStartupEvent.failure(e.cause()));
            } else if (e.parameters().mode() != IftMode.RDMA) {
                ctx.fireUserEventTriggered(LlpStartupEvent.failure(new IllegalStateException(
                        "the peer runs IFT in DDP mode (both R bits clear): no RDMAP over it")));
                ctx.close();
            } else {
                LlpStartupEvent startup = startup(e.parameters(), ctx);
                if (e.parameters().role() == IftRole.NODE_B && onRequest != null) {
                    pendingStartup = startup;
                    onRequest.accept(connectionRequest(e.parameters()));
                } else {
                    ctx.fireUserEventTriggered(startup);
                }
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (pendingStartup == null) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (held == null) {
            held = new ArrayDeque<>();
            ctx.channel().config().setAutoRead(false); // at most one read batch waits for the decision
        }
        held.add(msg);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IftFramingException) {
            IftFramingException e = (IftFramingException) cause;
            cause = new LlpException(e.terminateErrorType(), e.terminateErrorCode(), e.streamCanCarryTerminate(),
                    e.getMessage(), e);
        }
        ctx.fireExceptionCaught(cause);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseHeld();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        releaseHeld();
        super.channelInactive(ctx);
    }

    private void releaseHeld() {
        if (held != null) {
            held.forEach(ReferenceCountUtil::release);
            held = null;
        }
    }

    /** Node B accepted: the stream starts, then what arrived meanwhile goes up in order. */
    private void accepted() {
        LlpStartupEvent startup = pendingStartup;
        if (startup == null) {
            return;
        }
        pendingStartup = null;
        ctx.fireUserEventTriggered(startup);
        if (held != null) {
            ArrayDeque<Object> q = held;
            held = null;
            q.forEach(ctx::fireChannelRead);
            ctx.fireChannelReadComplete();
            ctx.channel().config().setAutoRead(true);
        }
    }

    private LlpStartupEvent startup(IftParameters p, ChannelHandlerContext ctx) {
        IftFramer framer = ctx.pipeline().get(IftFramer.class);
        if (framer == null) {
            throw new IllegalStateException("IFT adaption completed but no IftFramer is in the pipeline");
        }
        LowerLayer lower = new LowerLayer() {
            @Override
            public int mulpdu() {
                return framer.mulpdu();
            }

            @Override
            public void closeAfterFlush() {
                framer.closeAfterFlush(LingeringClose.INSTANCE);
            }

            @Override
            public String transmitHoldReason() {
                return framer.isTxHeld() ? "IFT holds its frames" : null;
            }
        };
        LlpParameters parameters = LlpParameters.builder("IFT",
                        p.role() == IftRole.NODE_A ? LlpRole.INITIATOR : LlpRole.RESPONDER, lower, p)
                .version(p.ddpVersion()).ird(framing.ird()).ord(framing.ord())
                .digestsPayload(p.txPayloadCrc()).build();
        return LlpStartupEvent.success(parameters, lower);
    }

    private IwarpConnectionRequest connectionRequest(IftParameters p) {
        return new IwarpConnectionRequest(ctx.channel(), new IwarpConnectionRequest.Answer() {
            @Override
            public byte[] privateData() {
                return new byte[0]; // IFT carries none
            }

            @Override
            public IftParameters request() {
                return p;
            }

            @Override
            public void accept(byte[] replyPrivateData, int ird, int ord) {
                // IFT has no reply to carry private data or IRD/ORD: they were agreed beforehand
                if (ctx.executor().inEventLoop()) {
                    accepted();
                } else {
                    ctx.executor().execute(IftLlpAdapter.this::accepted);
                }
            }

            @Override
            public void reject(byte[] replyPrivateData) {
                ctx.executor().execute(() -> {
                    pendingStartup = null;
                    releaseHeld();
                });
            }
        });
    }
}
