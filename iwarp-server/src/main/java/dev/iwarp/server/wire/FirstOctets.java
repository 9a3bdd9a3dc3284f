package dev.iwarp.server.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the first octets a peer sends (a copy; every octet still goes on to the framing) to tell which framing it
 * speaks ({@link PeerFraming}). A client keeps what its server answered ({@link Watch}), to say "the server speaks
 * MPA; use --wire iwarp" instead of the framing's own startup error. {@code serve} ({@link #serve}) logs one line naming
 * what a peer of another framing spoke and answers it with its own framing's refusal (an MPA Reply with R=1, an IFT
 * adaption indication, a VI/TCP ConnectReject), whose first octets let that client name this server's framing, before
 * the framing's startup refuses the peer as it always does.
 */
public final class FirstOctets extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(FirstOctets.class);
    public static final String NAME = "first-octets";

    private final ByteBuf seen = Unpooled.buffer(PeerFraming.NEEDED, PeerFraming.NEEDED);
    private final PeerFraming own;
    private final boolean answer;
    private volatile PeerFraming spoken;

    private FirstOctets(PeerFraming own, boolean answer) {
        this.own = own;
        this.answer = answer;
    }

    /** The framing the peer's first octets showed, or null. */
    PeerFraming spoken() {
        return spoken;
    }

    /** serve: puts the watcher after {@code baseName} in {@code ch}'s pipeline (or first if null); {@code own} is ours. */
    public static void serve(Channel ch, PeerFraming own, String baseName) {
        FirstOctets f = new FirstOctets(own, true);
        if (baseName != null && ch.pipeline().get(baseName) != null) {
            ch.pipeline().addAfter(baseName, NAME, f);
        } else {
            ch.pipeline().addFirst(NAME, f);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf in && spoken == null) {
            seen.writeBytes(in, in.readerIndex(), Math.min(in.readableBytes(), seen.writableBytes()));
            spoken = PeerFraming.of(seen);
            if (spoken != null || !seen.isWritable()) {
                ctx.pipeline().remove(this);
                if (answer && spoken != null && spoken != own) {
                    LOG.warn("{} speaks {}, not {} ({}); answered with {} refusal", Addresses.printable(
                            ctx.channel().remoteAddress()), spoken.spoken(), own.spoken(), own.option(),
                            own.withArticle());
                    ctx.writeAndFlush(own.refusal());
                }
            }
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        seen.release();
    }

    /** A client's record of what its server answered, over every attempt of one connect. */
    public static final class Watch {
        private final PeerFraming own;
        private volatile FirstOctets last;

        public Watch(PeerFraming own) {
            this.own = own;
        }

        /** The connection's channel hook: watches this attempt's first octets. */
        public void install(Channel ch) {
            FirstOctets f = new FirstOctets(own, false);
            last = f;
            ch.pipeline().addFirst(NAME, f);
        }

        /** "the server at ... speaks MPA; use --wire iwarp" when the server answered in another framing, else null. */
        public String mismatch(java.net.SocketAddress server) {
            FirstOctets f = last;
            PeerFraming theirs = f == null ? null : f.spoken();
            return theirs == null || theirs == own ? null : PeerFraming.mismatch(server, own, theirs);
        }
    }
}
