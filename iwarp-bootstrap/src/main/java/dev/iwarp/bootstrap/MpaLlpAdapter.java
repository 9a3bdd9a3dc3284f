package dev.iwarp.bootstrap;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.ddp.llp.LlpException;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.LlpStream;
import dev.iwarp.ddp.llp.RtrMessage;
import dev.iwarp.ddp.llp.UlpduDelivery;
import dev.iwarp.ddp.llp.UlpduReceiver;
import dev.iwarp.framing.DirectReadAllocator;
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
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;

import java.util.function.Consumer;

/**
 * Binds MPA to DDP's lower-layer contract: the {@link MpaStartupCompletionEvent} becomes an
 * {@link LlpStartupEvent} (fired first; the MPA event follows for handlers that want it), an
 * {@link MpaException} during full operation becomes an {@link LlpException} (Layer 2, EType 0, the
 * MPA code; RFC 5044 §8), the {@link MpaFramer} serves as the {@link LlpStream}, and on the
 * Responder side an {@link MpaConnectRequest} becomes an {@link IwarpConnectionRequest}.
 *
 * <p>The {@link LlpStream}'s writer is {@link MpaFramer#writeUlpdu} (header octets and payload framed
 * without a composite; markers and held FPDUs handled by the framer). Once the core binds its
 * {@link UlpduReceiver}, the framer hands each ULPDU to it through a {@link ReceiverSink}: a large
 * payload header first, read from the socket into the memory the receiver names; anything else whole,
 * CRC checked, copied once into place ({@link UlpduDelivery}). Socket reads go straight into that memory
 * only through the {@link DirectReadAllocator} the framing hands over (none under TLS); nothing here looks
 * at what else is in the pipeline.
 */
final class MpaLlpAdapter extends ChannelDuplexHandler {
    /** MPA's only Terminate EType (RFC 5044 §8). */
    private static final int ETYPE_MPA = 0;
    /** The framing's name per revision (RFC 5044 §7.1: Rev 0 and 1; RFC 6581: 2), one string for every connection. */
    private static final String[] NAMES = {"MPA Rev 0", "MPA Rev 1", "MPA Rev 2"};

    private final Consumer<IwarpConnectionRequest> onRequest;
    /** The channel's allocator when the socket's octets reach the framer unchanged, else null. */
    private final DirectReadAllocator directReads;

    MpaLlpAdapter(Consumer<IwarpConnectionRequest> onRequest, DirectReadAllocator directReads) {
        this.onRequest = onRequest;
        this.directReads = directReads;
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
                framer.readDirectlyWith(directReads);
                LlpStream lower = lowerLayer(ctx, framer);
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

    private static LlpParameters parameters(MpaParameters p, LlpStream lower) {
        // The connection keeps these for its lifetime: the negotiated values, not the startup frames
        // (the peer's private data is kept once, below).
        return LlpParameters.builder(name(p.revision()),
                        p.role() == MpaRole.INITIATOR ? LlpRole.INITIATOR : LlpRole.RESPONDER, lower,
                        p.withoutStartupFrames())
                .version(p.ddpVersion()).ird(p.ird()).ord(p.ord()).rtr(rtr(p.rtrType()))
                .peerPrivateData(p.peerPrivateData()).digestsPayload(p.crc()).build();
    }

    static String name(int revision) {
        return revision >= 0 && revision < NAMES.length ? NAMES[revision] : "MPA Rev " + revision;
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

    private LlpStream lowerLayer(ChannelHandlerContext adapter, MpaFramer framer) {
        return new LlpStream() {
            @Override
            public boolean writeUlpdu(ByteBuf header, ByteBuf payload, ChannelPromise promise) {
                return framer.writeUlpdu(header, payload, promise);
            }

            @Override
            public boolean copiesPayload(int headerLength, int payloadLength) {
                return framer.copiesUlpdu(headerLength, payloadLength);
            }

            @Override
            public void receiveWith(UlpduReceiver r) {
                framer.receiveWith(new ReceiverSink(r));
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
