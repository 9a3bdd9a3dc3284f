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

    /**
     * Longest wait, once a connect timed out, for its event loop to read octets that already reached the socket
     * ({@link Watch#mismatchOnceRead}), when the connect's own timeout is not shorter: the wait is for our own
     * loop, which normally takes a few microseconds.
     */
    static final long READ_GRACE_MILLIS = 2_000;
    /**
     * The least wait in effect (0: the connect's timeout or {@link #READ_GRACE_MILLIS}, whichever is shorter).
     * Tests raise it, so that a loop starved of CPU on a saturated machine still reads within the wait.
     */
    static volatile long minReadGraceMillis;

    private final ByteBuf seen = Unpooled.buffer(PeerFraming.NEEDED, PeerFraming.NEEDED);
    private final PeerFraming own;
    private final boolean answer;
    private final Watch watch;
    private volatile PeerFraming spoken;

    private FirstOctets(PeerFraming own, boolean answer, Watch watch) {
        this.own = own;
        this.answer = answer;
        this.watch = watch;
    }

    /** serve: puts the watcher after {@code baseName} in {@code ch}'s pipeline (or first if null); {@code own} is ours. */
    public static void serve(Channel ch, PeerFraming own, String baseName) {
        FirstOctets f = new FirstOctets(own, true, null);
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
            if (watch != null && spoken != null && spoken != own) {
                watch.foreign = spoken;
            }
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

    /** How long {@link Watch#mismatchOnceRead} waits after a connect of {@code timeoutMs} timed out. */
    static long readGraceMillis(long timeoutMs) {
        return Math.max(minReadGraceMillis, Math.min(timeoutMs, READ_GRACE_MILLIS));
    }

    /** A client's record of what its server answered, over every attempt of one connect. */
    public static final class Watch {
        private final PeerFraming own;
        private volatile PeerFraming foreign;
        private volatile Channel channel;

        public Watch(PeerFraming own) {
            this.own = own;
        }

        /** The connection's channel hook: watches this attempt's first octets. */
        public void install(Channel ch) {
            FirstOctets f = new FirstOctets(own, false, this);
            channel = ch;
            ch.pipeline().addFirst(NAME, f);
        }

        /**
         * As {@link #mismatch}, for a caller whose wait timed out: octets that reached the socket before the timeout
         * may not have been read yet when the event loop was busy (a loaded machine), so this first lets the
         * attempt's event loop run its pending reads, waiting at most {@code maxWaitMs}.
         */
        public String mismatchOnceRead(java.net.SocketAddress server, long maxWaitMs) {
            String other = mismatch(server);
            Channel ch = channel;
            long end = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(maxWaitMs);
            // the first task may run before the loop next polls the socket; a pause lets it poll before the next one
            for (int round = 0; round < 3 && other == null && ch != null && ch.isOpen() && System.nanoTime() < end;
                 round++) {
                try {
                    Thread.sleep(round == 0 ? 0 : 10);
                    ch.eventLoop().submit(() -> { }).await(Math.max(1, (end - System.nanoTime()) / 1_000_000));
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    break; // the loop is shutting down: nothing more will be read
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
                other = mismatch(server);
            }
            return other;
        }

        /**
         * "the server at ... speaks MPA; use --wire iwarp" when the server answered in another framing on any attempt
         * so far (VI/TCP re-establishes), else null.
         */
        public String mismatch(java.net.SocketAddress server) {
            PeerFraming theirs = foreign;
            return theirs == null ? null : PeerFraming.mismatch(server, own, theirs);
        }
    }
}
