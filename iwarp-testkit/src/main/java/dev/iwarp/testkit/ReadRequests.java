package dev.iwarp.testkit;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;

/**
 * Counts the read requests that pass it towards the socket: placed below a framer, it shows when the framer asks
 * for another socket read (with auto-read off, only while nothing completed in the read batch).
 */
public final class ReadRequests extends ChannelOutboundHandlerAdapter {
    private int asked;

    /** The read requests that passed so far. */
    public int asked() {
        return asked;
    }

    @Override
    public void read(ChannelHandlerContext ctx) {
        asked++;
        ctx.read();
    }
}
