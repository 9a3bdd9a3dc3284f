package dev.iwarp.bootstrap;

import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaDevice;
import dev.iwarp.verbs.RdmaEngine;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.Promise;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.SocketAddress;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The entry point of the verbs API over real TCP (or SCTP with {@link SctpFraming}): a software RNIC ({@link RdmaDevice}), event
 * loops, and client and server bootstraps that compose transport, a {@link Framing} (MPA by default),
 * DDP and the RDMAP engine.
 *
 * <pre>{@code
 * IwarpStack stack = IwarpStack.builder().build();
 * ProtectionDomain pd = stack.allocPd();
 * QueuePair qp = stack.connect(addr, ConnectOptions.of(pd)).get();
 * stack.listen(addr, MpaSettings.defaults(), req -> req.accept(pd, sendCq, recvCq, new byte[0]));
 * }</pre>
 */
public final class IwarpStack implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(IwarpStack.class);

    private final Transport transport;
    private final EventLoopGroup group;
    private final RdmaDevice device = new RdmaDevice();
    private final Consumer<Channel> channelHook;
    private final int threads;
    private EventLoopGroup sctpGroup;

    private IwarpStack(Transport transport, int threads, Consumer<Channel> channelHook) {
        this.transport = transport;
        this.threads = threads;
        this.group = new MultiThreadIoEventLoopGroup(threads, transport.ioHandlerFactory());
        this.channelHook = channelHook;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Transport transport() {
        return transport;
    }

    public RdmaDevice device() {
        return device;
    }

    public ProtectionDomain allocPd() {
        return device.allocPd();
    }

    /**
     * Connects and starts the options' framing as Initiator (MPA by default). When startup fails in a
     * way the framing can retry (MPA with {@link MpaSettings#rev1Fallback()}: a peer that closes on
     * our Rev 2 Request), the framing it names is tried once on a new connection (RFC 6581 §5).
     */
    public Future<QueuePair> connect(SocketAddress remote, ConnectOptions options) {
        Promise<QueuePair> result = GlobalEventExecutor.INSTANCE.newPromise();
        attempt(remote, options, result, true);
        return result;
    }

    private void attempt(SocketAddress remote, ConnectOptions options, Promise<QueuePair> result, boolean first) {
        RdmaEngine engine = new RdmaEngine(options.pd(), options.sendCq(), options.recvCq());
        options.beforeStartupCallback().accept(engine.queuePair());
        Bootstrap b = options.framing() instanceof SctpFraming
                ? SctpBootstraps.client(sctpGroup(), (SctpFraming) options.framing())
                : new Bootstrap().group(group).channel(transport.socketChannel()).option(ChannelOption.TCP_NODELAY, true);
        ChannelFuture cf = b.handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        channelHook.accept(ch);
                        IwarpPipeline.addInitiator(ch.pipeline(), options.framing());
                        ch.pipeline().addLast(IwarpPipeline.RDMAP, engine);
                    }
                }).connect(remote);
        cf.addListener(f -> {
            if (!f.isSuccess()) {
                result.tryFailure(f.cause());
                return;
            }
            engine.queuePair().established().addListener(e -> {
                if (e.isSuccess()) {
                    result.trySuccess(engine.queuePair());
                } else {
                    // no queue pair: a rejected (R=1) connection is left open by MPA for its ULP, which is us;
                    // what the framing still sends on failure (RFC 6581 errors 6, 7: a Terminate) goes first
                    closeAfterPendingWrites(cf.channel());
                    Framing retry = first ? options.framing().retryAfter(e.cause()) : null;
                    if (retry != null) {
                        LOG.info("{} refused {}; retrying with {}", remote, options.framing().name(), retry.name());
                        attempt(remote, options.framing(retry), result, false);
                    } else {
                        result.tryFailure(e.cause());
                    }
                }
            });
        });
    }

    /**
     * Listens as MPA Responder: shorthand for {@code listen(local, MpaFraming.of(settings), onRequest)}.
     */
    public Channel listen(SocketAddress local, MpaSettings settings, Consumer<IwarpConnectionRequest> onRequest)
            throws InterruptedException {
        return listen(local, MpaFraming.of(settings), onRequest);
    }

    /**
     * Listens with {@code framing} as Responder; {@code onRequest} receives every connection whose
     * startup is valid so far (over MPA: every valid MPA Request) and must accept or reject it (from
     * any thread).
     */
    public Channel listen(SocketAddress local, Framing framing, Consumer<IwarpConnectionRequest> onRequest)
            throws InterruptedException {
        Objects.requireNonNull(framing);
        Objects.requireNonNull(onRequest);
        ServerBootstrap b = framing instanceof SctpFraming
                ? SctpBootstraps.server(sctpGroup(), (SctpFraming) framing)
                : new ServerBootstrap().group(group).channel(transport.serverChannel())
                        .childOption(ChannelOption.TCP_NODELAY, true);
        return b.childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        channelHook.accept(ch);
                        IwarpPipeline.addResponder(ch.pipeline(), framing, onRequest);
                    }
                }).bind(local).sync().channel();
    }

    /**
     * Closes {@code ch} once the framing's failure handling has run and what it wrote is on the wire:
     * an empty buffer written at the head completes after everything written before it.
     */
    private static void closeAfterPendingWrites(Channel ch) {
        ch.eventLoop().execute(() -> {
            if (ch.isOpen()) {
                ch.pipeline().firstContext().writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            }
        });
    }

    /**
     * The event loops of SCTP associations: NIO, whatever {@link #transport()} is (Netty's epoll and
     * io_uring transports have no SCTP). Created at the first SCTP use.
     */
    private synchronized EventLoopGroup sctpGroup() {
        if (sctpGroup == null) {
            sctpGroup = transport == Transport.NIO ? group : new MultiThreadIoEventLoopGroup(threads, NioIoHandler.newFactory());
        }
        return sctpGroup;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (sctpGroup != null && sctpGroup != group) {
                sctpGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
            }
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        device.close();
    }

    /** Builder: transport (default {@link Transport#auto()}) and event-loop threads (default: cores). */
    public static final class Builder {
        private Transport transport = Transport.auto();
        private int threads;
        private Consumer<Channel> channelHook = ch -> { };

        public Builder transport(Transport transport) {
            this.transport = Objects.requireNonNull(transport);
            return this;
        }

        public Builder threads(int threads) {
            this.threads = threads;
            return this;
        }

        /**
         * Called for every connection's channel before the iWARP handlers are added, e.g. to put a
         * {@code PcapWriteHandler} or an {@code SslHandler} below MPA.
         */
        public Builder channelHook(Consumer<Channel> hook) {
            this.channelHook = Objects.requireNonNull(hook);
            return this;
        }

        public IwarpStack build() {
            return new IwarpStack(transport, threads, channelHook);
        }
    }
}
