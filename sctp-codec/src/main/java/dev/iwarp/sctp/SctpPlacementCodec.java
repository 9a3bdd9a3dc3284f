package dev.iwarp.sctp;

import com.sun.nio.sctp.AssociationChangeNotification;
import com.sun.nio.sctp.SendFailedNotification;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.sctp.SctpMessage;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * {@link SctpMessage} to {@link PlacementChunk} and back (draft-stewart-otis-sctp-ddp-rdma-00
 * §2.2 layouts, §3.2.1 receiver and §3.2.2 sender rules), once
 * {@link SctpAdaptationHandler} has {@link #start started} it with the enabled {@link SctpAdaptation}.
 *
 * <p><b>Inbound</b>, in this order: size against the maximum chunk user data (C10), length against
 * the <em>peer's</em> extension (C1), mode defined (C6), mode allowed for the peer's indication (R1-R4:
 * C2-C5). The chunk's data is a retained slice of the message (no copy). Any violation: one log line,
 * the association is aborted, an {@link SctpShimException} goes up, nothing more is delivered.
 *
 * <p><b>Outbound</b>: the mode must be allowed for <em>our</em> indication (S1, S2; refused with a failed
 * promise, nothing sent); the message is built in one pooled direct buffer (extension, then data: the
 * JDK sends a single {@code ByteBuffer}), stamped with the next AWS (first 1, mod 2^32: draft §2.2 does
 * not say where AWS starts; our choice), on stream 0, PPID 0, unordered (our choice: DDP orders by
 * MSN and AWS, so SCTP's ordering would only add head-of-line blocking). Other messages pass through unchanged.
 *
 * <p>Before {@link #start} or when the adaptation is disabled, messages pass through unchanged.
 */
public class SctpPlacementCodec extends ChannelDuplexHandler {
    private static final Logger LOG = LoggerFactory.getLogger(SctpPlacementCodec.class);

    private final SctpSettings settings;
    private SctpAdaptation adaptation;
    private boolean failed;
    /** AWS of the last message sent (0: none yet). */
    private long txAws;

    public SctpPlacementCodec(SctpSettings settings) {
        this.settings = settings;
    }

    /** Starts the codec with the outcome of the indication exchange. */
    public void start(SctpAdaptation adaptation) {
        if (!adaptation.enabled()) {
            throw new IllegalArgumentException("adaptation not enabled: " + adaptation);
        }
        this.adaptation = adaptation;
    }

    /** The adaptation in force, or {@code null} before startup. */
    public SctpAdaptation adaptation() {
        return adaptation;
    }

    /** Largest data (after the extension) of one message we send: MULPDU of the layer above. */
    public int maxData() {
        SctpIndication local = adaptation != null ? adaptation.local() : settings.localIndication();
        return settings.maxChunkUserData() - (local == null ? 20 : local.extensionLength());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (adaptation == null || !(msg instanceof SctpMessage)) {
            ctx.fireChannelRead(msg);
            return;
        }
        SctpMessage m = (SctpMessage) msg;
        if (failed) {
            m.release(); // after an error the shim delivers nothing further (the association is being aborted)
            return;
        }
        try {
            ctx.fireChannelRead(decode(m));
        } catch (SctpShimException e) {
            fail(ctx, e);
        } finally {
            m.release();
        }
    }

    private PlacementChunk decode(SctpMessage m) {
        ByteBuf in = m.content();
        int start = in.readerIndex();
        int length = in.readableBytes();
        SctpIndication peer = adaptation.peer();
        if (length > settings.maxChunkUserData()) {
            throw new SctpShimException(SctpShimError.C10, length + " octets, at most " + settings.maxChunkUserData());
        }
        if (adaptation.transport() == IndicationTransport.HELLO && SctpIndication.looksLikeParameter(in)) {
            throw new SctpShimException(SctpShimError.I3, "an Adaptation Hello after the first: "
                    + ByteBufUtil.hexDump(in, start, Math.min(length, 8)));
        }
        int extension = peer.extensionLength();
        if (length < extension) {
            throw new SctpShimException(SctpShimError.C1, length + " octets from a " + peer + " sender, whose "
                    + "extension is " + extension + ": " + ByteBufUtil.hexDump(in, start, length));
        }
        int word = in.getInt(start);
        int modeValue = word >>> 8;
        PlacementMode mode = PlacementMode.of(modeValue);
        if (mode == null) {
            throw new SctpShimException(SctpShimError.C6, String.format("mode 0x%06x", modeValue));
        }
        if (!mode.allowedFor(peer)) {
            throw new SctpShimException(ruleFor(mode), mode + " from a " + peer + " sender");
        }
        long aws = peer.carriesAws() ? in.getUnsignedInt(start + 16) : PlacementChunk.NO_AWS;
        return new PlacementChunk(mode, word & 0xFF, in.getInt(start + 4), in.getLong(start + 8), aws,
                m.streamIdentifier(), m.protocolIdentifier(), m.isUnordered(),
                in.retainedSlice(start + extension, length - extension));
    }

    private static SctpShimError ruleFor(PlacementMode mode) {
        switch (mode) {
            case NO_PLACEMENT:
                return SctpShimError.C2;
            case DDP:
                return SctpShimError.C3;
            case DDP_WITH_TAG:
                return SctpShimError.C4;
            default:
                return SctpShimError.C5;
        }
    }

    private void fail(ChannelHandlerContext ctx, SctpShimException e) {
        failed = true;
        LOG.warn("{}: {}; aborting the association", ctx.channel(), e.getMessage());
        SctpAbort.abort(ctx.channel());
        ctx.fireExceptionCaught(e);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof PlacementChunk)) {
            ctx.write(msg, promise);
            return;
        }
        PlacementChunk chunk = (PlacementChunk) msg;
        try {
            if (adaptation == null) {
                throw new IllegalStateException("placement chunk written before the adaptation was enabled");
            }
            SctpIndication local = adaptation.local();
            PlacementMode mode = chunk.mode();
            if (!mode.allowedFor(local)) {
                SctpShimError e = local == SctpIndication.RDMA_ONLY ? SctpShimError.S1
                        : local == SctpIndication.RDMA_NEGOTIATION ? SctpShimError.S2 : SctpShimError.S3;
                throw new SctpShimException(e, mode + " with our indication " + local);
            }
            int data = chunk.content().readableBytes();
            int extension = local.extensionLength();
            if (extension + data > settings.maxChunkUserData()) {
                throw new SctpShimException(SctpShimError.C11, (extension + data) + " octets, at most "
                        + settings.maxChunkUserData());
            }
            ByteBuf out = ctx.alloc().directBuffer(extension + data);
            out.writeInt(mode.value() << 8 | (chunk.flags() & ~PlacementFlags.RESERVED));
            out.writeInt(chunk.tag());
            out.writeLong(mode == PlacementMode.NO_PLACEMENT ? 0 : chunk.offset()); // S4: offset 0
            if (local.carriesAws()) {
                txAws = (txAws + 1) & 0xFFFFFFFFL;
                out.writeInt((int) txAws);
            }
            out.writeBytes(chunk.content(), chunk.content().readerIndex(), data);
            ChannelPromise sent = promise.unvoid(); // the engine writes most segments with a void promise
            ctx.write(new SctpMessage(0, 0, true, out), sent);
            sent.addListener(f -> {
                if (!f.isSuccess() && isMessageTooLong(f.cause())) {
                    fail(ctx, new SctpShimException(SctpShimError.C11, f.cause().getMessage()));
                }
            });
        } catch (RuntimeException e) {
            promise.tryFailure(e);
        } finally {
            ReferenceCountUtil.release(chunk);
        }
    }

    private static boolean isMessageTooLong(Throwable t) {
        return t instanceof IOException && t.getMessage() != null && t.getMessage().contains("too long");
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof AssociationChangeNotification) {
            AssociationChangeNotification n = (AssociationChangeNotification) evt;
            if (n.event() == AssociationChangeNotification.AssocChangeEvent.COMM_LOST
                    || n.event() == AssociationChangeNotification.AssocChangeEvent.CANT_START) {
                LOG.info("{}: association {} (C12)", ctx.channel(), n.event());
            }
        } else if (evt instanceof SendFailedNotification) {
            LOG.info("{}: send failed, error {} (C12)", ctx.channel(), ((SendFailedNotification) evt).errorCode());
        }
        ctx.fireUserEventTriggered(evt);
    }
}
