package dev.iwarp.bootstrap;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ddp.DdpOutboundMessage;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.ddp.llp.LlpException;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.LowerLayer;
import dev.iwarp.ddp.llp.RtrMessage;
import dev.iwarp.mpa.MpaConnectRequest;
import dev.iwarp.mpa.MpaErrorCode;
import dev.iwarp.mpa.MpaException;
import dev.iwarp.mpa.MpaFramer;
import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.mpa.MpaRole;
import dev.iwarp.mpa.MpaStartupCompletionEvent;
import dev.iwarp.mpa.MpaStartupFrame;
import dev.iwarp.mpa.RtrType;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandler;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelPromise;

import java.util.function.Consumer;

/**
 * Binds MPA to DDP's lower-layer contract: the {@link MpaStartupCompletionEvent} becomes an
 * {@link LlpStartupEvent} (fired first; the MPA event follows for handlers that want it), an
 * {@link MpaException} during full operation becomes an {@link LlpException} (Layer 2, EType 0, the
 * MPA code; RFC 5044 §8), the {@link MpaFramer} serves as the {@link LowerLayer}, and on the
 * Responder side an {@link MpaConnectRequest} becomes an {@link IwarpConnectionRequest}.
 *
 * <p>Outbound, when the framer sends no markers, the adapter takes DDP segments itself
 * ({@link LowerLayer#takesSegments()}): it encodes each header into one reused array and hands it
 * with the payload to {@link MpaFramer#writeUlpdu}, so no composite ULPDU is built per segment.
 * The framer is the handler right below this adapter (the framing installs them together).
 */
final class MpaLlpAdapter extends ChannelDuplexHandler {
    /** MPA's only Terminate EType (RFC 5044 §8). */
    private static final int ETYPE_MPA = 0;

    private final Consumer<IwarpConnectionRequest> onRequest;

    /** DDP header octets of the segment being written (at most the 18 of an untagged header). */
    private final ByteBuf header = Unpooled.wrappedBuffer(new byte[DdpUntaggedSegment.HEADER_LENGTH]);
    /** The framer, once in full operation without outbound markers; segments then reach it directly. */
    private MpaFramer segmentFramer;

    MpaLlpAdapter(Consumer<IwarpConnectionRequest> onRequest) {
        this.onRequest = onRequest;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        MpaFramer framer = segmentFramer;
        DdpSegment segment;
        if (msg instanceof DdpOutboundMessage) { // one write per segment (LowerLayer.takesMessagesFrom)
            DdpOutboundMessage m = (DdpOutboundMessage) msg;
            if (framer != null) {
                header.clear();
                ByteBuf payload = m.nextSegment(header);
                if (framer.writeUlpdu(header, payload, promise)) { // the payload's reference goes to the framer
                    m.payloadCopiedBelow();
                }
                return;
            }
            segment = m.nextSegment();
        } else if (msg instanceof DdpSegment) {
            segment = (DdpSegment) msg;
        } else {
            ctx.write(msg, promise);
            return;
        }
        if (framer == null) { // not announced as taking segments: encode as DdpCodec would
            try {
                ctx.write(DdpCodec.encode(segment, ctx.alloc()), promise);
            } finally {
                segment.release();
            }
            return;
        }
        header.clear();
        segment.encodeHeader(header);
        framer.writeUlpdu(header, segment.content(), promise); // the segment's reference goes to the framer
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof MpaConnectRequest && onRequest != null) {
            onRequest.accept(connectionRequest((MpaConnectRequest) evt));
            return;
        }
        if (evt instanceof MpaStartupCompletionEvent) {
            MpaStartupCompletionEvent e = (MpaStartupCompletionEvent) evt;
            if (e.isSuccess()) {
                MpaFramer framer = framer(ctx);
                segmentFramer = framer.markersTx() ? null : framer;
                LowerLayer lower = lowerLayer(ctx, framer, segmentFramer != null);
                ctx.fireUserEventTriggered(LlpStartupEvent.success(parameters(e.parameters(), lower), lower));
            } else {
                ctx.fireUserEventTriggered(LlpStartupEvent.failure(e.cause()));
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof MpaException) {
            MpaErrorCode code = ((MpaException) cause).errorCode();
            // RFC 5044 §8: after a CRC or marker error (or an over-long ULPDU) TCP is intact and
            // RDMAP reports it in a Terminate; a lost connection can carry nothing
            cause = new LlpException(ETYPE_MPA, code.code(), code != MpaErrorCode.TCP_CONNECTION_LOST,
                    cause.getMessage(), cause);
        }
        ctx.fireExceptionCaught(cause);
    }

    private static LlpParameters parameters(MpaParameters p, LowerLayer lower) {
        return LlpParameters.builder("MPA Rev " + p.revision(),
                        p.role() == MpaRole.INITIATOR ? LlpRole.INITIATOR : LlpRole.RESPONDER, lower, p)
                .version(p.ddpVersion()).ird(p.ird()).ord(p.ord()).rtr(rtr(p.rtrType()))
                .peerPrivateData(p.peerPrivateData()).digestsPayload(p.crc()).build();
    }

    private static RtrMessage rtr(RtrType type) {
        if (type == null) {
            return null;
        }
        switch (type) {
            case WRITE:
                return RtrMessage.WRITE;
            case READ:
                return RtrMessage.READ;
            default:
                return RtrMessage.SEND;
        }
    }

    private static MpaFramer framer(ChannelHandlerContext ctx) {
        MpaFramer framer = ctx.pipeline().get(MpaFramer.class);
        if (framer == null) {
            throw new IllegalStateException("MPA startup completed but no MpaFramer is in the pipeline");
        }
        return framer;
    }

    private static LowerLayer lowerLayer(ChannelHandlerContext adapter, MpaFramer framer, boolean takesSegments) {
        return new LowerLayer() {
            @Override
            public boolean takesSegments() {
                return takesSegments;
            }

            @Override
            public boolean takesMessagesFrom(ChannelHandlerContext sender) {
                return takesSegments && DdpCodec.onlyCodecBetween(adapter, sender, ChannelOutboundHandler.class);
            }

            @Override
            public boolean lendsUlpdusTo(ChannelHandlerContext receiver) {
                ChannelHandlerContext framerCtx = adapter.pipeline().context(framer);
                return framerCtx != null
                        && DdpCodec.onlyCodecBetween(framerCtx, adapter, ChannelInboundHandler.class)
                        && DdpCodec.onlyCodecBetween(adapter, receiver, ChannelInboundHandler.class)
                        && framer.lendUlpdus(); // refused with inbound markers
            }

            @Override
            public boolean copiesPayload(int headerLength, int payloadLength) {
                return takesSegments && framer.copiesUlpdu(headerLength, payloadLength);
            }

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
                return framer.isTxHeld() ? "no valid FPDU received yet (RFC 5044 §7.1.2 rule 4)" : null;
            }
        };
    }

    private static IwarpConnectionRequest connectionRequest(MpaConnectRequest r) {
        return new IwarpConnectionRequest(r.channel(), new IwarpConnectionRequest.Answer() {
            @Override
            public byte[] privateData() {
                return r.privateData();
            }

            @Override
            public MpaStartupFrame request() {
                return r.request();
            }

            @Override
            public void accept(byte[] replyPrivateData, int ird, int ord) {
                r.accept(replyPrivateData, ird, ord);
            }

            @Override
            public void reject(byte[] replyPrivateData) {
                r.reject(replyPrivateData);
            }
        });
    }

    /**
     * The ULPDU of the Terminate an MPA Initiator sends for an RFC 6581 negotiation failure (Layer 2
     * LLP, EType 0 MPA, code 6 or 7; no header: there is no offending segment). Version 1: these codes
     * exist only with Rev 2.
     */
    static ByteBuf terminateUlpdu(ByteBufAllocator alloc, MpaErrorCode code) {
        DdpUntaggedSegment t = TerminateMessage.forError(new TerminateCause(LlpException.LAYER, ETYPE_MPA,
                code.code()), (DdpSegment) null, null).toSegment(alloc);
        try {
            return DdpCodec.encode(t, alloc);
        } finally {
            t.release();
        }
    }
}
