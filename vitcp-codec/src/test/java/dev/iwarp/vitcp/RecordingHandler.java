package dev.iwarp.vitcp;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.util.ArrayList;
import java.util.List;

/** Stands in for the full-operation handler: records what reaches it and releases it. */
final class RecordingHandler extends ChannelInboundHandlerAdapter {
    final VitcpConnection connection;
    final List<String> segments = new ArrayList<>();
    final List<Object> events = new ArrayList<>();

    RecordingHandler(VitcpConnection connection) {
        this.connection = connection;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        segments.add(msg.toString());
        io.netty.util.ReferenceCountUtil.release(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        events.add(evt);
    }
}
