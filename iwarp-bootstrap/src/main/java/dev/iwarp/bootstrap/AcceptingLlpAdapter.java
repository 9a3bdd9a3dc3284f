package dev.iwarp.bootstrap;

import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.UlpduDelivery;
import dev.iwarp.ddp.llp.UlpduReceiver;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;

import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * What the adapters of framings without a request/reply exchange (IFT, the SCTP adaptation) share:
 * when the accepting side's startup completes, the adapter asks the ULP (an
 * {@link IwarpConnectionRequest} to {@code onRequest}) and the stream starts only once it is accepted.
 * ULPDUs the peer sends meanwhile are held (and the channel stops reading) until the decision; a
 * rejection drops them and the request closes the connection.
 */
abstract class AcceptingLlpAdapter extends ChannelDuplexHandler {
    private final Consumer<IwarpConnectionRequest> onRequest;
    private ChannelHandlerContext ctx;
    /** Responder, startup done, not yet accepted: the startup event waits here, and ULPDUs behind it. */
    private LlpStartupEvent pendingStartup;
    private ArrayDeque<Object> held;
    /** Bound by the core once the stream started: ULPDUs go to it instead of up the pipeline. */
    private UlpduReceiver receiver;

    AcceptingLlpAdapter(Consumer<IwarpConnectionRequest> onRequest) {
        this.onRequest = onRequest;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /**
     * The framing's startup succeeded: the stream starts now (Initiator, or no {@code onRequest}), or
     * once the ULP accepted {@code request} (the framing's own view of it).
     */
    final void started(ChannelHandlerContext ctx, LlpStartupEvent startup, boolean responder, Object request) {
        if (responder && onRequest != null) {
            pendingStartup = startup;
            onRequest.accept(connectionRequest(request));
        } else {
            ctx.fireUserEventTriggered(startup);
        }
    }

    /** One ULPDU to the core: now, or held while the ULP has not decided. */
    final void deliver(ChannelHandlerContext ctx, Object ulpdu) {
        if (pendingStartup == null) {
            deliverNow(ctx, ulpdu);
            return;
        }
        if (held == null) {
            held = new ArrayDeque<>();
            ctx.channel().config().setAutoRead(false); // at most one read batch waits for the decision
        }
        held.add(ulpdu);
    }

    /**
     * To the bound receiver (header, then the payload where it says; the frame's CRC was checked over the
     * whole frame before), or up the pipeline as a buffer while none is bound.
     */
    private void deliverNow(ChannelHandlerContext ctx, Object ulpdu) {
        UlpduReceiver r = receiver;
        if (r == null || !(ulpdu instanceof ByteBuf)) {
            ctx.fireChannelRead(ulpdu);
            return;
        }
        try {
            UlpduDelivery.deliver((ByteBuf) ulpdu, r);
        } finally {
            ((ByteBuf) ulpdu).release();
        }
    }

    /** {@link dev.iwarp.ddp.llp.LlpStream#receiveWith}: from now on ULPDUs go to {@code r}. */
    final void receiveWith(UlpduReceiver r) {
        receiver = r;
    }

    /**
     * {@link dev.iwarp.ddp.llp.UlpduWriter#writeUlpdu} for a framing whose unit is one buffer: the header
     * octets in a small buffer of their own, joined with the payload (no payload copy), written through
     * this adapter's own {@code write}. Never copies the payload.
     */
    final boolean writeJoined(ByteBuf header, ByteBuf payload, ChannelPromise promise) {
        int length = header.readableBytes();
        ByteBuf ulpdu = ctx.alloc().buffer(length).writeBytes(header, header.readerIndex(), length);
        if (payload.isReadable()) {
            ulpdu = ctx.alloc().compositeBuffer(2).addComponents(true, ulpdu, payload);
        } else {
            payload.release();
        }
        try {
            write(ctx, ulpdu, promise);
        } catch (Exception e) {
            promise.tryFailure(e);
        }
        return false;
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

    /** Accepted: the stream starts, then what arrived meanwhile goes up in order. */
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
            q.forEach(u -> deliverNow(ctx, u));
            ctx.fireChannelReadComplete();
            ctx.channel().config().setAutoRead(true);
        }
    }

    private IwarpConnectionRequest connectionRequest(Object request) {
        return new IwarpConnectionRequest(ctx.channel(), new IwarpConnectionRequest.Answer() {
            @Override
            public byte[] privateData() {
                return new byte[0]; // neither IFT nor the SCTP adaptation carries any
            }

            @Override
            public Object request() {
                return request;
            }

            @Override
            public void accept(byte[] replyPrivateData, int ird, int ord) {
                // no reply to carry private data or IRD/ORD: they were agreed beforehand
                if (ctx.executor().inEventLoop()) {
                    accepted();
                } else {
                    ctx.executor().execute(AcceptingLlpAdapter.this::accepted);
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
