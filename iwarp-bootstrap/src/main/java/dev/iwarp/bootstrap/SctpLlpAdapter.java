package dev.iwarp.bootstrap;

import dev.iwarp.framing.PeerAddress;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.ddp.llp.LlpException;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.LlpStream;
import dev.iwarp.ddp.llp.UlpduReceiver;
import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.sctp.PlacementChunk;
import dev.iwarp.sctp.PlacementFlags;
import dev.iwarp.sctp.PlacementMode;
import dev.iwarp.sctp.SctpAbort;
import dev.iwarp.sctp.SctpAdaptation;
import dev.iwarp.sctp.SctpAdaptationEvent;
import dev.iwarp.sctp.SctpPlacementCodec;
import dev.iwarp.sctp.SctpShimError;
import dev.iwarp.sctp.SctpShimException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.sctp.SctpMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Binds the SCTP adaptation to DDP's lower-layer contract (the
 * draft carries DDP/RDMAP only by its modes; how RFC 5041/5040 ride on it is the sctp-codec README's decision): the {@link SctpAdaptationEvent}
 * becomes an {@link LlpStartupEvent} (the accepting side asks the ULP first, as over IFT), each
 * {@link PlacementChunk} released in AWS order becomes one ULPDU after the extension was checked
 * against the DDP header (error C8: abort), and each ULPDU going down becomes a chunk with the
 * extension fields below. Shim errors become {@link LlpException}s that carry no
 * Terminate (the association was aborted: the peer's shim is broken).
 */
final class SctpLlpAdapter extends AcceptingLlpAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(SctpLlpAdapter.class);
    /** Graceful close: SHUTDOWN delivers what is queued; after this long, ABORT (our choice: the draft
     * says nothing of teardown). */
    static final long GRACEFUL_CLOSE_MILLIS = 5_000;

    private final SctpFraming framing;
    private final boolean initiator;
    private boolean failed;

    SctpLlpAdapter(SctpFraming framing, boolean initiator, Consumer<IwarpConnectionRequest> onRequest) {
        super(onRequest);
        this.framing = framing;
        this.initiator = initiator;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof SctpAdaptationEvent) {
            SctpAdaptationEvent e = (SctpAdaptationEvent) evt;
            if (!e.isSuccess()) {
                ctx.fireUserEventTriggered(LlpStartupEvent.failure(e.cause()));
                ctx.close(); // I1, I2: graceful; I3, I4 already aborted
            } else {
                started(ctx, startup(e.adaptation(), ctx), !initiator, e.adaptation());
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof PlacementChunk)) {
            ctx.fireChannelRead(msg);
            return;
        }
        PlacementChunk chunk = (PlacementChunk) msg;
        if (failed) {
            chunk.release();
            return;
        }
        String inconsistency = inconsistency(chunk);
        if (inconsistency != null) {
            chunk.release();
            failed = true;
            SctpShimException e = new SctpShimException(SctpShimError.C8, inconsistency);
            LOG.warn("{}: {}; aborting the association", PeerAddress.of(ctx), e.getMessage());
            SctpAbort.abort(ctx.channel());
            exceptionCaught(ctx, e);
            return;
        }
        deliver(ctx, chunk.content()); // the ULPDU: the chunk's data, its reference passed on
    }

    /** Our mapping of DDP onto the draft's modes (draft §2.2): mode 3 iff DDP T=1, mode 0 iff T=0; for mode 3 Tag = STag and Offset = TO. */
    private static String inconsistency(PlacementChunk c) {
        ByteBuf d = c.content();
        if (!d.isReadable()) {
            return "no DDP header after the extension";
        }
        boolean tagged = (d.getByte(d.readerIndex()) & DdpSegment.FLAG_TAGGED) != 0;
        if (c.mode() == PlacementMode.RDMA_PLACEMENT) {
            if (!tagged) {
                return "RDMA_PLACEMENT_MODE before an untagged DDP segment";
            }
            if (d.readableBytes() < DdpTaggedSegment.HEADER_LENGTH) {
                return "tagged DDP header cut short: " + ByteBufUtil.hexDump(d);
            }
            int stag = DdpTaggedSegment.stag(d, d.readerIndex());
            long to = DdpTaggedSegment.to(d, d.readerIndex());
            if (stag != c.tag() || to != c.offset()) {
                return String.format("extension tag 0x%08x offset 0x%016x, DDP STag 0x%08x TO 0x%016x", c.tag(),
                        c.offset(), stag, to);
            }
            return null;
        }
        if (c.mode() != PlacementMode.NO_PLACEMENT) {
            return c.mode() + " carries no DDP segment in this mapping";
        }
        return tagged ? "NO_PLACEMENT_MODE before a tagged DDP segment" : null;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof ByteBuf) || !((ByteBuf) msg).isReadable()) {
            ctx.write(msg, promise); // flush barriers and anything not a ULPDU
            return;
        }
        ByteBuf ulpdu = (ByteBuf) msg;
        int start = ulpdu.readerIndex();
        int control = ulpdu.getUnsignedByte(start);
        boolean last = (control & DdpSegment.FLAG_LAST) != 0;
        int opcode = ulpdu.readableBytes() > 1 ? ulpdu.getUnsignedByte(start + 1) & 0x0F : -1;
        PlacementChunk chunk;
        if ((control & DdpSegment.FLAG_TAGGED) != 0) {
            // Write and Read Response place into the STag at the TO; N only on the Read Response's last
            int flags = last && opcode == RdmapOpcode.RDMA_READ_RESPONSE.value() ? PlacementFlags.NOTIFY_ON_COMPLETION : 0;
            chunk = PlacementChunk.outbound(PlacementMode.RDMA_PLACEMENT, flags, DdpTaggedSegment.stag(ulpdu, start),
                    DdpTaggedSegment.to(ulpdu, start), ulpdu);
        } else {
            boolean invalidate = opcode == RdmapOpcode.SEND_WITH_INVALIDATE.value()
                    || opcode == RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE.value();
            int flags = !last ? 0 : invalidate ? PlacementFlags.NOTIFY_ON_COMPLETION | PlacementFlags.RELEASE_TAG
                    : PlacementFlags.NOTIFY_ON_COMPLETION;
            chunk = PlacementChunk.outbound(PlacementMode.NO_PLACEMENT, flags,
                    invalidate ? DdpUntaggedSegment.rsvdUlp2(ulpdu, start) : 0, 0, ulpdu);
        }
        ctx.write(chunk, promise);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof SctpShimException) {
            failed = true;
            // the association is aborted (or closing): no Terminate can follow
            cause = new LlpException(0, 0, false, cause.getMessage(), cause);
        }
        ctx.fireExceptionCaught(cause);
    }

    private LlpStartupEvent startup(SctpAdaptation a, ChannelHandlerContext ctx) {
        SctpPlacementCodec codec = ctx.pipeline().get(SctpPlacementCodec.class);
        if (codec == null) {
            throw new IllegalStateException("SCTP adaptation enabled but no SctpPlacementCodec is in the pipeline");
        }
        int mulpdu = codec.maxData(); // max chunk user data minus the 20-octet RDMA extension
        LlpStream lower = new LlpStream() {
            private boolean closing;

            @Override
            public int mulpdu() {
                return mulpdu;
            }

            @Override
            public void closeAfterFlush() {
                if (closing) {
                    return;
                }
                closing = true;
                // an empty SctpMessage is never sent (Netty drops zero-length messages): a flush barrier
                ctx.writeAndFlush(new SctpMessage(0, 0, true, Unpooled.EMPTY_BUFFER))
                        .addListener(ChannelFutureListener.CLOSE);
                ctx.executor().schedule(() -> {
                    if (ctx.channel().isOpen()) {
                        LOG.info("{}: graceful close not done after {} ms; aborting", PeerAddress.of(ctx), GRACEFUL_CLOSE_MILLIS);
                        SctpAbort.abort(ctx.channel());
                    }
                }, GRACEFUL_CLOSE_MILLIS, TimeUnit.MILLISECONDS);
            }

            @Override
            public String transmitHoldReason() {
                return null;
            }

            @Override
            public boolean writeUlpdu(ByteBuf header, ByteBuf payload, ChannelPromise promise) {
                return writeJoined(header, payload, promise);
            }

            @Override
            public void receiveWith(UlpduReceiver receiver) {
                SctpLlpAdapter.this.receiveWith(receiver);
            }
        };
        LlpParameters parameters = LlpParameters.builder("SCTP", initiator ? LlpRole.INITIATOR : LlpRole.RESPONDER,
                lower, a).ird(framing.ird()).ord(framing.ord()).build();
        return LlpStartupEvent.success(parameters, lower);
    }
}
