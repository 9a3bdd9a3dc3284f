package dev.iwarp.bootstrap;

import dev.iwarp.ddp.llp.LlpException;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.LlpStream;
import dev.iwarp.ddp.llp.UlpduReceiver;
import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.ift.IftAdaptionCompletionEvent;
import dev.iwarp.ift.IftFramer;
import dev.iwarp.ift.IftFramingException;
import dev.iwarp.ift.IftMode;
import dev.iwarp.ift.IftParameters;
import dev.iwarp.ift.IftRole;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;

import java.util.function.Consumer;

/**
 * Binds IFT to DDP's lower-layer contract: the {@link IftAdaptionCompletionEvent} becomes an
 * {@link LlpStartupEvent} (fired first; the IFT event follows), an {@link IftFramingException} becomes
 * an {@link LlpException} (Layer 2, EType 0, the code IFT names: 0x02 CRC, 0x03 framing, 0x01 lost),
 * and the {@link IftFramer} serves as the {@link LlpStream}.
 *
 * <p>On node B the adaption completes without asking the ULP (IFT has no request/reply), so the
 * adapter asks then: the connection reaches {@code onRequest} as an {@link IwarpConnectionRequest},
 * and the stream starts only when it is accepted. ULPDUs node A sends meanwhile are held (and the
 * channel stops reading) until the decision. A stream in IFT's DDP mode (both R bits clear: no RDMAP)
 * is refused.
 *
 * <p>Once the core binds its {@link UlpduReceiver}, the framer hands each ULPDU to it through a
 * {@link ReceiverSink}: a large payload header first, read from the socket into the memory the receiver names
 * (through the {@link DirectReadAllocator} the framing hands over; none under TLS), anything else whole, its
 * CRCs checked, copied once into place. ULPDUs held while node B's ULP decided go to the receiver from here.
 */
final class IftLlpAdapter extends AcceptingLlpAdapter {
    private final IftFraming framing;
    /** The channel's allocator when the socket's octets reach the framer unchanged, else null. */
    private final DirectReadAllocator directReads;

    IftLlpAdapter(IftFraming framing, Consumer<IwarpConnectionRequest> onRequest, DirectReadAllocator directReads) {
        super(onRequest);
        this.framing = framing;
        this.directReads = directReads;
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
                started(ctx, startup(e.parameters(), ctx), e.parameters().role() == IftRole.NODE_B, e.parameters());
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        deliver(ctx, msg);
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

    private LlpStartupEvent startup(IftParameters p, ChannelHandlerContext ctx) {
        IftFramer framer = ctx.pipeline().get(IftFramer.class);
        if (framer == null) {
            throw new IllegalStateException("IFT adaption completed but no IftFramer is in the pipeline");
        }
        framer.readDirectlyWith(directReads);
        LlpStream lower = new LlpStream() {
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

            @Override
            public boolean writeUlpdu(ByteBuf header, ByteBuf payload, ChannelPromise promise) {
                return writeJoined(header, payload, promise);
            }

            @Override
            public void receiveWith(UlpduReceiver receiver) {
                IftLlpAdapter.this.receiveWith(receiver); // the ULPDUs held until node B's ULP accepted
                framer.receiveWith(new ReceiverSink(receiver));
            }
        };
        LlpParameters parameters = LlpParameters.builder("IFT",
                        p.role() == IftRole.NODE_A ? LlpRole.INITIATOR : LlpRole.RESPONDER, lower, p)
                .version(p.ddpVersion()).ird(framing.ird()).ord(framing.ord())
                .digestsPayload(p.txPayloadCrc()).build();
        return LlpStartupEvent.success(parameters, lower);
    }
}
