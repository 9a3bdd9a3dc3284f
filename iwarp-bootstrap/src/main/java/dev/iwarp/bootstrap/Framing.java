package dev.iwarp.bootstrap;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;

import io.netty.channel.ChannelPipeline;

import java.util.function.Consumer;

/**
 * A framing below DDP and RDMAP (MPA, IFT or the SCTP adaptation) as the bootstrap uses it: the channels it
 * runs on, which handlers to install for each side, whether its startup carries private data, and how to
 * retry. An implementation installs the framing's own startup handler and one adapter that turns the
 * framing's startup event and errors into DDP's lower-layer contract ({@link dev.iwarp.ddp.llp}); DDP and
 * RDMAP then run unchanged.
 *
 * <p>To add a framing: write its module (Netty only, no DDP or RDMAP types), implement this
 * interface and its adapter here, give {@link ConnectOptions} and {@link IwarpStack#listen} users a
 * way to choose it, and touch nothing else. {@link MpaFraming} is the example.
 */
public interface Framing {
    /** The stack's event loops, as a framing's bootstrap needs them. */
    interface EventLoops {
        /** The stack's event loops, of its {@link #transport()}. */
        EventLoopGroup group();

        Transport transport();

        /** NIO event loops (the stack's own when its transport is NIO), for channels only NIO has (SCTP). */
        EventLoopGroup nioGroup();
    }

    /** The bootstrap of the side that connects: a TCP connection with Nagle off, unless the framing says otherwise. */
    default Bootstrap initiatorBootstrap(EventLoops loops) {
        return new Bootstrap().group(loops.group()).channel(loops.transport().socketChannel())
                .option(ChannelOption.TCP_NODELAY, true);
    }

    /** The bootstrap of the side that accepts: TCP with Nagle off, unless the framing says otherwise. */
    default ServerBootstrap responderBootstrap(EventLoops loops) {
        return new ServerBootstrap().group(loops.group()).channel(loops.transport().serverChannel())
                .childOption(ChannelOption.TCP_NODELAY, true);
    }

    /**
     * Whether the startup carries the ULP's private data both ways (MPA's Request and Reply, RFC 5044 §7.1). A
     * framing without it (IFT, the SCTP adaptation) hands {@link IwarpConnectionRequest} an empty array, and a
     * ULP that has something to say at setup says it in its first message.
     */
    default boolean carriesPrivateData() {
        return true;
    }

    /** A short name for logs, e.g. {@code "MPA Rev 2"}. */
    String name();

    /**
     * Adds, at the end of {@code pipeline}, the handlers of the side that opens the connection: the
     * startup handler (which becomes the framer) and the contract adapter ({@link IwarpPipeline#LLP}).
     */
    void addInitiator(ChannelPipeline pipeline);

    /**
     * Adds the handlers of the side that accepts connections. Every startup the framing lets through
     * reaches {@code onRequest} to be accepted or rejected; with {@code null} the framing's own
     * connection-request event travels on up the pipeline instead.
     */
    void addResponder(ChannelPipeline pipeline, Consumer<IwarpConnectionRequest> onRequest);

    /**
     * After startup failed with {@code cause} on a connection made with this framing: the framing to
     * try on a new connection (e.g. MPA Rev 1 after a peer closed on our Rev 2 Request, RFC 6581 §5),
     * or {@code null} to give up.
     */
    default Framing retryAfter(Throwable cause) {
        return null;
    }

    /**
     * This framing for a stream carried in TLS records of at most {@code recordPayload} octets
     * (the TLS layer calls it): a framing that sizes its PDUs from the TCP segment size sizes them
     * from the record instead. Unchanged by default.
     */
    default Framing overTls(int recordPayload) {
        return this;
    }
}
