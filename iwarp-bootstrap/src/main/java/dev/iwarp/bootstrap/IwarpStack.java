package dev.iwarp.bootstrap;

import dev.iwarp.framing.OpenChannels;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.rdmap.engine.RdmaEngine;
import dev.iwarp.verbs.MemoryBudget;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaDevice;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.Future;

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
    /**
     * The write-buffer water marks of every connection unless {@link Builder#writeBufferWaterMark} says
     * otherwise: 384 KiB / 768 KiB. The transmit side cuts messages into FPDUs only while the channel is
     * writable, so the high mark (plus one FPDU) bounds what one connection holds in user space when its
     * peer stops reading, and the low mark sets how much goes out per resumption. With Netty's default
     * 32 / 64 KiB a 64 KiB Write made the channel unwritable at once and every message cost its own
     * {@code writev}; at 1 MiB the 16 Read Responses of an ORD-16 peer went out in one burst and the two
     * ends took turns instead of overlapping (Read 64 KiB at 0.4-0.5 x raw Netty). Against 256 / 512 KiB,
     * 384 / 768 KiB took Read 64 KiB from a median of 0.75 x to 1.03 x without CRC (0.54 x to 0.65 x with
     * it), Writes unchanged (interleaved runs).
     */
    public static final WriteBufferWaterMark DEFAULT_WRITE_BUFFER_WATER_MARK =
            new WriteBufferWaterMark(384 * 1024, 768 * 1024);

    private final Transport transport;
    private final EventLoopGroup group;
    private final RdmaDevice device = new RdmaDevice();
    /** Longest wait, per step, for the stack's open channels to close at {@link #close()}. */
    private static final long CLOSE_MILLIS = 2_000;
    private final OpenChannels open = new OpenChannels();
    private final int threads;
    private EventLoopGroup sctpGroup;
    /** What a framing's bootstrap runs on ({@link Framing#initiatorBootstrap}). */
    private final Framing.EventLoops loops = new Framing.EventLoops() {
        @Override
        public EventLoopGroup group() {
            return group;
        }

        @Override
        public Transport transport() {
            return transport;
        }

        @Override
        public EventLoopGroup nioGroup() {
            return sctpGroup();
        }
    };
    private final java.util.function.UnaryOperator<io.netty.channel.IoHandlerFactory> ioHandlers;
    /** What both sides build connections with. */
    private final StackChannels channels;

    private IwarpStack(Transport transport, int threads, Consumer<Channel> channelHook, Consumer<Channel> framingHook,
                       WriteBufferWaterMark waterMark,
                       java.util.function.UnaryOperator<io.netty.channel.IoHandlerFactory> ioHandlers) {
        this.transport = transport;
        this.threads = threads;
        this.ioHandlers = ioHandlers;
        this.group = new MultiThreadIoEventLoopGroup(threads, ioHandlers.apply(transport.ioHandlerFactory()));
        this.channels = new StackChannels(loops, waterMark, open, channelHook, framingHook);
    }

    /** A builder: the best transport available, one event loop thread per core. */
    public static Builder builder() {
        return new Builder();
    }

    /** The transport in use (epoll or NIO). */
    public Transport transport() {
        return transport;
    }

    /** The software RNIC: STag table and protection domains. */
    public RdmaDevice device() {
        return device;
    }

    /** Allocates a protection domain on this stack's device. */
    public ProtectionDomain allocPd() {
        return device.allocPd();
    }

    /**
     * Connects and starts the options' framing as Initiator (MPA by default). When startup fails in a
     * way the framing can retry (MPA with {@link MpaSettings#rev1Fallback()}: a peer that closes on
     * our Rev 2 Request), the framing it names is tried once on a new connection (RFC 6581 §5).
     */
    public Future<QueuePair> connect(SocketAddress remote, ConnectOptions options) {
        return InitiatorSide.connect(channels, remote, options);
    }

    /**
     * Listens as MPA Responder: shorthand for {@code listen(local, ListenOptions.mpa(settings), onRequest)}.
     */
    public Channel listen(SocketAddress local, MpaSettings settings, Consumer<IwarpConnectionRequest> onRequest)
            throws InterruptedException {
        return listen(local, ListenOptions.mpa(settings), onRequest);
    }

    /** Listens with {@code framing} as Responder: shorthand for {@code listen(local, ListenOptions.of(framing), onRequest)}. */
    public Channel listen(SocketAddress local, Framing framing, Consumer<IwarpConnectionRequest> onRequest)
            throws InterruptedException {
        return listen(local, ListenOptions.of(framing), onRequest);
    }

    /**
     * Listens as the options' framing's Responder; {@code onRequest} receives every connection whose startup is
     * valid so far (over MPA: every valid MPA Request) and must accept or reject it (from any thread).
     */
    public Channel listen(SocketAddress local, ListenOptions options, Consumer<IwarpConnectionRequest> onRequest)
            throws InterruptedException {
        return ResponderSide.listen(channels, local, options, onRequest);
    }

    /**
     * The event loops of SCTP associations: NIO, whatever {@link #transport()} is (Netty's epoll and
     * io_uring transports have no SCTP). Created at the first SCTP use.
     */
    private synchronized EventLoopGroup sctpGroup() {
        if (sctpGroup == null) {
            sctpGroup = transport == Transport.NIO ? group : new MultiThreadIoEventLoopGroup(threads,
                    ioHandlers.apply(NioIoHandler.newFactory()));
        }
        return sctpGroup;
    }

    @Override
    public void close() {
        // closed while the loops still run: their handlers then release what they hold (see OpenChannels)
        open.closeAll(CLOSE_MILLIS);
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
        private Consumer<Channel> framingHook = ch -> { };
        private dev.iwarp.verbs.RdmaObserver observer;
        private WriteBufferWaterMark waterMark = DEFAULT_WRITE_BUFFER_WATER_MARK;
        private MemoryBudget memoryBudget;
        private long readResponseRate;
        private java.util.function.UnaryOperator<io.netty.channel.IoHandlerFactory> ioHandlers =
                java.util.function.UnaryOperator.identity();

        /**
         * The transport to use instead of the best available; {@link #build()} throws {@link IllegalStateException}
         * saying why when it cannot run here ({@link Transport#unavailableReason()}).
         */
        public Builder transport(Transport transport) {
            this.transport = Objects.requireNonNull(transport);
            return this;
        }

        /** Event loop threads. */
        public Builder threads(int threads) {
            this.threads = threads;
            return this;
        }

        /**
         * Called for every connection's channel before the iWARP handlers are added, e.g. to put a
         * {@code PcapWriteHandler} or an {@code SslHandler} below MPA. MPA reads large payloads from the socket
         * straight into their memory unless told otherwise: a handler added here that transforms the inbound
         * octets (an {@code SslHandler} of your own) needs {@link MpaFraming#withoutDirectReads()} (the stack's own
         * TLS options need nothing).
         */
        public Builder channelHook(Consumer<Channel> hook) {
            this.channelHook = Objects.requireNonNull(hook);
            return this;
        }

        /**
         * Called for every connection right before the framing's handlers are added at the end of its
         * pipeline: with TLS, once the handshake completed and above the TLS handler, so what a
         * handler added here sees is the decrypted stream (e.g. a {@code PcapWriteHandler} recording
         * the MPA stream inside TLS); without TLS, where {@link #channelHook} runs.
         */
        public Builder framingHook(Consumer<Channel> hook) {
            this.framingHook = Objects.requireNonNull(hook);
            return this;
        }

        /**
         * Reports every connection's RDMA traffic and Terminates to {@code observer} (a metrics binding; it runs
         * on the event loops, so it must be cheap): set on each channel as {@link dev.iwarp.verbs.RdmaObserver#KEY}
         * before the engine is added.
         */
        public Builder observer(dev.iwarp.verbs.RdmaObserver observer) {
            this.observer = Objects.requireNonNull(observer);
            return this;
        }

        /**
         * Wraps the I/O handler factory of the stack's event loops (default: none), e.g. to measure how long each
         * loop is busy (serve's metrics): the wrapper sees every loop's I/O pass, never a message.
         */
        public Builder ioHandlerFactory(java.util.function.UnaryOperator<io.netty.channel.IoHandlerFactory> wrapper) {
            this.ioHandlers = Objects.requireNonNull(wrapper);
            return this;
        }

        /**
         * Write-buffer water marks of every connection (default {@link #DEFAULT_WRITE_BUFFER_WATER_MARK}):
         * the high mark plus one FPDU is the most a connection holds in user space while its peer does
         * not read. Lower it to trade bulk throughput for memory when serving many connections.
         */
        public Builder writeBufferWaterMark(WriteBufferWaterMark waterMark) {
            this.waterMark = Objects.requireNonNull(waterMark);
            return this;
        }

        /**
         * The budget of memory committed on peers' behalf ({@link RdmaDevice#setMemoryBudget}): every protection
         * domain of the stack's device gets an account in it. Default: none.
         */
        public Builder memoryBudget(MemoryBudget budget) {
            this.memoryBudget = budget;
            return this;
        }

        /**
         * Octets per second of RDMA Read Responses each connection sends at most ({@link
         * RdmaDevice#setReadResponseRate}; 0, the default: no limit).
         */
        public Builder readResponseRate(long octetsPerSecond) {
            if (octetsPerSecond < 0) {
                throw new IllegalArgumentException("read response rate " + octetsPerSecond);
            }
            this.readResponseRate = octetsPerSecond;
            return this;
        }

        /** Starts the event loops and returns the stack; close it to stop them. */
        public IwarpStack build() {
            transport.checkAvailable(); // a transport asked for but absent or refused: one line saying why
            Consumer<Channel> hook = channelHook;
            if (observer != null) {
                dev.iwarp.verbs.RdmaObserver o = observer;
                hook = hook.andThen(ch -> ch.attr(dev.iwarp.verbs.RdmaObserver.KEY).set(o));
            }
            IwarpStack stack = new IwarpStack(transport, threads, hook, framingHook, waterMark, ioHandlers);
            stack.device().setMemoryBudget(memoryBudget);
            stack.device().setReadResponseRate(readResponseRate);
            return stack;
        }
    }
}
