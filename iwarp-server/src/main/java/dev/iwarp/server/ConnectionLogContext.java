package dev.iwarp.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import org.slf4j.MDC;

/**
 * Puts a connection's {@code conn} (Netty's channel id), {@code peer} (its remote address) and {@code wire}
 * into the logging MDC while its pipeline handles an inbound event, so that every line logged on the way
 * (framing errors, Terminates, the session's lines) carries them; {@code --log-format json} writes them as
 * fields. First in the pipeline; an event loop thread serves many connections, so each event restores what
 * the MDC held before.
 */
final class ConnectionLogContext extends ChannelDuplexHandler {
    static final String NAME = "log-context";
    static final String CONN = "conn";
    static final String PEER = "peer";
    static final String WIRE = "wire";

    private final String conn;
    private final String peer;
    private final String wire;

    private ConnectionLogContext(Channel ch, String wire) {
        this.conn = ch.id().asShortText();
        this.peer = dev.iwarp.server.wire.Addresses.format(ch.remoteAddress());
        this.wire = wire;
    }

    /** Adds the handler at the head of {@code ch}'s pipeline. */
    static void install(Channel ch, String wire) {
        ch.pipeline().addFirst(NAME, new ConnectionLogContext(ch, wire));
    }

    /** Runs {@code r} (e.g. a close listener's log line) with {@code ch}'s fields in the MDC, if it has them. */
    static void run(Channel ch, Runnable r) {
        ChannelHandler h = ch.pipeline().get(NAME);
        if (h instanceof ConnectionLogContext c) {
            c.within(r);
        } else {
            r.run();
        }
    }

    private void within(Runnable r) {
        String c = MDC.get(CONN);
        String p = MDC.get(PEER);
        String w = MDC.get(WIRE);
        MDC.put(CONN, conn);
        MDC.put(PEER, peer);
        MDC.put(WIRE, wire);
        try {
            r.run();
        } finally {
            restore(CONN, c);
            restore(PEER, p);
            restore(WIRE, w);
        }
    }

    private static void restore(String key, String value) {
        if (value == null) {
            MDC.remove(key);
        } else {
            MDC.put(key, value);
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        within(ctx::fireChannelActive);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        within(ctx::fireChannelInactive);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        within(() -> ctx.fireChannelRead(msg));
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        within(ctx::fireChannelReadComplete);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        within(() -> ctx.fireUserEventTriggered(evt));
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        within(ctx::fireChannelWritabilityChanged);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        within(() -> ctx.fireExceptionCaught(cause));
    }
}
