package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.llp.LlpStream;
import dev.iwarp.ddp.llp.UlpduReceiver;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;

/**
 * A lower layer that frames nothing and allocates nothing: each ULPDU's payload goes down alone (its header is not
 * needed where this is used), so that counting tests see only what the engine itself allocates or copies. The test
 * feeds received ULPDUs to {@link #receiver} itself. ({@link FakeLlpStream} joins header and payload, a copy.)
 */
final class PayloadOnlyLlpStream extends ChannelOutboundHandlerAdapter implements LlpStream {
    private final int mulpdu;
    private ChannelHandlerContext ctx;
    /** Bound by the engine. */
    UlpduReceiver receiver;

    PayloadOnlyLlpStream(int mulpdu) {
        this.mulpdu = mulpdu;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public int mulpdu() {
        return mulpdu;
    }

    @Override
    public boolean writeUlpdu(ByteBuf header, ByteBuf payload, ChannelPromise promise) {
        ctx.write(payload, promise);
        return false;
    }

    @Override
    public void closeAfterFlush() {
        ctx.flush();
        ctx.close();
    }

    @Override
    public String transmitHoldReason() {
        return null;
    }

    @Override
    public void receiveWith(UlpduReceiver r) {
        receiver = r;
    }
}
