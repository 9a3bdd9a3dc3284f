package dev.iwarp.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.util.ArrayList;
import java.util.List;

/**
 * The application end of a framing's pipeline under test (fuzzed, or one side of a pair): keeps each event, each
 * ULPDU that reaches it (copied, then released), each exception, and the framing's one completion event
 * ({@code C}); a second completion fails the run. A framing whose startup asks the application something (MPA's
 * connect request) is answered in {@link #otherEvent}.
 */
public class ApplicationEnd<C> extends ChannelInboundHandlerAdapter {
    public final List<Object> events = new ArrayList<>();
    public final List<byte[]> received = new ArrayList<>();
    public final List<Throwable> exceptions = new ArrayList<>();
    public C completion;
    private final Class<C> completionType;

    public ApplicationEnd(Class<C> completionType) {
        this.completionType = completionType;
    }

    @Override
    public final void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        events.add(evt);
        if (completionType.isInstance(evt)) {
            if (completion != null) {
                throw new AssertionError("two completion events");
            }
            completion = completionType.cast(evt);
        } else {
            otherEvent(evt);
        }
    }

    /** An event other than the completion; ignored unless overridden. */
    protected void otherEvent(Object evt) {
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf b = (ByteBuf) msg;
        try {
            byte[] a = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), a);
            received.add(a);
        } finally {
            b.release();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        exceptions.add(cause);
    }
}
