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
 *
 * <p>A read batch (the {@code channelRead}s of one pass of the event loop over the socket and the
 * {@code channelReadComplete} that Netty's transports fire after them) puts the fields once, at its first read,
 * and restores the MDC at its end: put and restored per event, they cost three map entries made again (the MDC
 * removes a key that was absent before) on every socket read of a busy connection. Events are handled without a
 * lambda per event for the same reason.
 */
final class ConnectionLogContext extends ChannelDuplexHandler {
    static final String NAME = "log-context";
    static final String CONN = "conn";
    static final String PEER = "peer";
    static final String WIRE = "wire";

    private final String conn;
    private final String peer;
    private final String wire;
    /** This connection's events running now (nested ones too), plus one while a read batch is open. */
    private int depth;
    /** A read batch is open: its fields stay in the MDC until its channelReadComplete. */
    private boolean inRead;
    /** What the MDC held before the outermost event put this connection's fields. */
    private String outerConn;
    private String outerPeer;
    private String outerWire;

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
        enter();
        try {
            r.run();
        } finally {
            exit();
        }
    }

    /** The fields in the MDC, unless an event of this connection put them already. */
    private void enter() {
        if (depth++ == 0) {
            outerConn = MDC.get(CONN);
            outerPeer = MDC.get(PEER);
            outerWire = MDC.get(WIRE);
            MDC.put(CONN, conn);
            MDC.put(PEER, peer);
            MDC.put(WIRE, wire);
        }
    }

    /** The MDC as it was, once the outermost event of this connection ends. */
    private void exit() {
        if (--depth == 0) {
            restore(CONN, outerConn);
            restore(PEER, outerPeer);
            restore(WIRE, outerWire);
            outerConn = null;
            outerPeer = null;
            outerWire = null;
        }
    }

    /** Ends the open read batch, if any. */
    private void endRead() {
        if (inRead) {
            inRead = false;
            exit();
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
        enter();
        try {
            ctx.fireChannelActive();
        } finally {
            exit();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        enter();
        try {
            ctx.fireChannelInactive();
        } finally {
            exit();
            endRead(); // a read batch a close cut short (no channelReadComplete) ends here
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!inRead) {
            inRead = true;
            enter(); // until channelReadComplete
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        enter();
        try {
            ctx.fireChannelReadComplete();
        } finally {
            exit();
            endRead();
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        enter();
        try {
            ctx.fireUserEventTriggered(evt);
        } finally {
            exit();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        enter();
        try {
            ctx.fireChannelWritabilityChanged();
        } finally {
            exit();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        enter();
        try {
            ctx.fireExceptionCaught(cause);
        } finally {
            exit();
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        endRead();
    }
}
