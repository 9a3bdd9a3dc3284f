package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.llp.LlpException;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.LlpStream;
import dev.iwarp.ddp.llp.UlpduDelivery;
import dev.iwarp.ddp.llp.UlpduReceiver;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.PendingWriteQueue;

import java.util.function.Consumer;

/**
 * A framing that is no framing: it honours the lower-layer contract and nothing else, so the engine
 * can be tested without MPA. It sits at the bottom of the pipeline, frames nothing (a written ULPDU
 * goes down as one buffer; a buffer read is one ULPDU, handed to the engine's receiver), fires the startup event with whatever parameters a test
 * chooses, raises LLP errors on demand, and can stall transmission (writes held, counting toward
 * writability, until {@link #unstall()}) or hold it as an MPA Responder does before its first FPDU.
 */
final class FakeLlpStream extends ChannelDuplexHandler implements LlpStream {
    private ChannelHandlerContext ctx;
    private PendingWriteQueue stalled;
    volatile int mulpdu = 1024;
    /** When set, {@link #transmitHoldReason()} reports it and ULPDUs written are dropped at the close. */
    String holdReason;
    int closeAfterFlushCalls;
    /** Payloads of at most this many octets are copied by {@link #writeUlpdu} (as MPA's small FPDUs); -1: none. */
    int copiesUpTo = -1;
    /** Told of every segment written, decoded (the caller keeps its reference). */
    Consumer<DdpSegment> tap;
    /** Bound by the engine: ULPDUs received go to it. */
    private UlpduReceiver receiver;
    /**
     * The ULPDU (counted from 1) whose write fails at once when its promise is void, as MPA's framer fails one on a
     * channel that closed: the void promise fires {@code exceptionCaught} inside the write. 0: none.
     */
    int failVoidWriteAt;
    /** Run inside that write, right after its failure was reported. */
    Runnable afterFailedWrite;
    private int ulpdusWritten;

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
    public void receiveWith(UlpduReceiver receiver) {
        this.receiver = receiver;
    }

    /** The receiver the engine bound, for tests that hand it ULPDUs header first as a framing would. */
    UlpduReceiver receiver() {
        return receiver;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (receiver == null || !(msg instanceof ByteBuf)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            UlpduDelivery.deliver((ByteBuf) msg, receiver);
        } finally {
            ((ByteBuf) msg).release();
        }
    }

    @Override
    public boolean copiesPayload(int headerLength, int payloadLength) {
        return payloadLength <= copiesUpTo && ctx.channel().isActive();
    }

    @Override
    public boolean writeUlpdu(ByteBuf header, ByteBuf payload, ChannelPromise promise) {
        if (++ulpdusWritten == failVoidWriteAt && promise.isVoid()) {
            payload.release();
            promise.setFailure(new java.nio.channels.ClosedChannelException());
            if (afterFailedWrite != null) {
                afterFailedWrite.run();
            }
            return false;
        }
        boolean copy = copiesPayload(header.readableBytes(), payload.readableBytes());
        ByteBuf h = ctx.alloc().buffer(header.readableBytes()).writeBytes(header, header.readerIndex(),
                header.readableBytes());
        ByteBuf ulpdu;
        if (copy) {
            ulpdu = h.writeBytes(payload);
            payload.release();
        } else {
            ulpdu = ctx.alloc().compositeBuffer(2).addComponents(true, h, payload);
        }
        if (tap != null) {
            DdpSegment s = DdpCodec.decode(ulpdu);
            try {
                tap.accept(s);
            } finally {
                s.release();
            }
        }
        write(ctx, ulpdu, promise);
        return copy;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof DdpSegment) { // a segment from a handler above: encode as DdpCodec would
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
