package dev.iwarp.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import org.slf4j.MDC;

/**
 * Gives a connection's log lines its {@code conn} (Netty's channel id), {@code peer} (its remote address) and
 * {@code wire} as MDC fields while its pipeline handles an inbound event, so that every line logged on the way
 * (framing errors, Terminates, the session's lines) carries them; {@code --log-format json} writes them as fields.
 * First in the pipeline. An event loop thread serves many connections: an event makes its connection the thread's
 * current one and gives the thread back its previous one at the end; {@link ConnectionLogFields} puts the current
 * one's fields into the MDC only when a line is logged, and the end of the event takes them out again (or puts the
 * previous connection's back). The three keys are this class's: what the MDC held under them before is not kept.
 *
 * <p>A read batch (the {@code channelRead}s of one pass of the event loop over the socket and the
 * {@code channelReadComplete} that Netty's transports fire after them) is one event from its first read to its
 * completion. Events are handled without a lambda per event, so that a batch that logs nothing allocates nothing.
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
    /** A read batch is open: this connection stays the thread's current one until its channelReadComplete. */
    private boolean inRead;
    /** The thread's slot while an event runs, and what it held before the outermost event. */
    private ConnectionLogFields.Slot slot;
    private ConnectionLogContext outer;
    private boolean outerInMdc;

    private ConnectionLogContext(Channel ch, String wire) {
        this.conn = ch.id().asShortText();
        this.peer = dev.iwarp.server.wire.Addresses.format(ch.remoteAddress());
        this.wire = wire;
    }

    /** Adds the handler at the head of {@code ch}'s pipeline. */
    static void install(Channel ch, String wire) {
        ConnectionLogFields.ensureInstalled();
        ch.pipeline().addFirst(NAME, new ConnectionLogContext(ch, wire));
    }

    /** Runs {@code r} (e.g. a close listener's log line) with {@code ch}'s fields on its lines, if it has them. */
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

    /** Puts this connection's fields into the MDC (a line is about to be logged). */
    void putFields() {
        MDC.put(CONN, conn);
        MDC.put(PEER, peer);
        MDC.put(WIRE, wire);
    }

    /** Takes the fields out of this thread's MDC. */
    private static void removeFields() {
        MDC.remove(CONN);
        MDC.remove(PEER);
        MDC.remove(WIRE);
    }

    /** This connection becomes the thread's current one, unless an event of it runs already. */
    private void enter() {
        if (depth++ == 0) {
            slot = ConnectionLogFields.slot();
            outer = slot.current;
            outerInMdc = slot.inMdc;
            slot.current = this;
            slot.inMdc = false;
        }
    }

    /** The thread's previous connection again (its fields back if they were in the MDC), at the outermost end. */
    private void exit() {
        if (--depth == 0) {
            ConnectionLogFields.Slot s = slot;
            if (s.inMdc) {
                if (outerInMdc) {
                    outer.putFields(); // the same keys: no new entries
                } else {
                    removeFields();
                }
            }
            s.current = outer;
            s.inMdc = outerInMdc;
            slot = null;
            outer = null;
        }
    }

    /** Ends the open read batch, if any. */
    private void endRead() {
        if (inRead) {
            inRead = false;
            exit();
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
