package dev.iwarp.verbs;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ddp.DdpOutboundMessage;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.ddp.llp.LlpException;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.LowerLayer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.PendingWriteQueue;

import java.util.ArrayList;
import java.util.List;

/**
 * A framing that is no framing: it honours the lower-layer contract and nothing else, so the engine
 * can be tested without MPA. It sits at the bottom of the pipeline, passes ULPDUs ({@code ByteBuf})
 * straight through in both directions, fires the startup event with whatever parameters a test
 * chooses, raises LLP errors on demand, and can stall transmission (writes held, counting toward
 * writability, until {@link #unstall()}) or hold it as an MPA Responder does before its first FPDU.
 */
final class FakeLowerLayer extends ChannelDuplexHandler implements LowerLayer {
    private ChannelHandlerContext ctx;
    private PendingWriteQueue stalled;
    volatile int mulpdu = 1024;
    /** When set, {@link #transmitHoldReason()} reports it and ULPDUs written are dropped at the close. */
    String holdReason;
    int closeAfterFlushCalls;
    /** Announced before startup: segments and messages come down here, and this cuts them as MPA's adapter does. */
    boolean cutsSegments;
    /** With {@link #cutsSegments}: messages are kept here uncut, as a handler holding writes would. */
    boolean holdsMessages;
    final List<DdpOutboundMessage> heldMessages = new ArrayList<>();

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** Fires the startup event: the engine enters RTS with these parameters. */
    void establish(LlpParameters parameters) {
        ctx.fireUserEventTriggered(LlpStartupEvent.success(parameters, this));
    }

    /** Fires a failed startup. */
    void fail(Throwable cause) {
        ctx.fireUserEventTriggered(LlpStartupEvent.failure(cause));
    }

    /** Reports an LLP error as a framing would (e.g. a CRC error: EType 0, code 2, Terminate possible). */
    void raise(LlpException e) {
        ctx.fireExceptionCaught(e);
    }

    /** From now on ULPDUs stay here (counted by the channel's writability) until {@link #unstall()}. */
    void stall() {
        if (stalled == null) {
            stalled = new PendingWriteQueue(ctx);
        }
    }

    /** Lets the stalled ULPDUs go and flushes them. */
    void unstall() {
        PendingWriteQueue q = stalled;
        stalled = null;
        if (q != null) {
            q.removeAndWriteAll();
            ctx.flush();
        }
    }

    /** Octets of ULPDUs held by {@link #stall()}. */
    long stalledBytes() {
        return stalled == null ? 0 : stalled.bytes();
    }

    @Override
    public int mulpdu() {
        return mulpdu;
    }

    @Override
    public void closeAfterFlush() {
        closeAfterFlushCalls++;
        if (holdReason != null) {
            ctx.close(); // held ULPDUs never leave
            return;
        }
        ctx.flush();
        ctx.close();
    }

    @Override
    public String transmitHoldReason() {
        return holdReason;
    }

    @Override
    public boolean takesSegments() {
        return cutsSegments;
    }

    @Override
    public boolean takesMessagesFrom(ChannelHandlerContext sender) {
        return cutsSegments;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof DdpOutboundMessage) { // LowerLayer.takesMessagesFrom: one segment per write
            if (holdsMessages) {
                heldMessages.add((DdpOutboundMessage) msg);
                return;
            }
            ByteBuf header = ctx.alloc().buffer(DdpUntaggedSegment.HEADER_LENGTH);
            ByteBuf payload = ((DdpOutboundMessage) msg).nextSegment(header);
            msg = ctx.alloc().compositeBuffer(2).addComponents(true, header, payload);
        } else if (msg instanceof DdpSegment) { // takesSegments without a message: encode as DdpCodec would
            DdpSegment segment = (DdpSegment) msg;
            try {
                msg = DdpCodec.encode(segment, ctx.alloc());
            } finally {
                segment.release();
            }
        }
        if (holdReason != null) {
            io.netty.util.ReferenceCountUtil.release(msg);
            promise.tryFailure(new IllegalStateException("held: " + holdReason));
            return;
        }
        if (stalled != null) {
            stalled.add(msg, promise);
            return;
        }
        ctx.write(msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (stalled == null) {
            ctx.flush();
        }
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        if (stalled != null) {
            stalled.removeAndFailAll(new IllegalStateException("closed"));
            stalled = null;
        }
        ctx.close(promise);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (stalled != null) {
            stalled.removeAndFailAll(new IllegalStateException("removed"));
        }
    }
}
