package dev.iwarp.vitcp.vi;

import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.framing.OpenChannels;
import dev.iwarp.vitcp.VitcpCodec;
import dev.iwarp.vitcp.VitcpConfig;
import dev.iwarp.vitcp.VitcpConnectException;
import dev.iwarp.vitcp.VitcpConnection;
import dev.iwarp.vitcp.VitcpListenerTable;
import dev.iwarp.vitcp.VitcpPassiveHandler;
import dev.iwarp.vitcp.VitcpPeerToPeer;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The VI/TCP provider: TCP connection setup and listening around the VI/TCP handlers (VIPL VipConnectRequest,
 * VipConnectWait/Accept/Reject, VipConnectPeerRequest). NIO transport unless built over another's event loops
 * and channel types (epoll's, say).
 */
public final class ViProvider implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ViProvider.class);
    /** First pause before re-establishing (draft §4.2) or a peer-to-peer retry after ConnectNoMatch (draft §4). */
    static final long RETRY_MILLIS = 50;
    /** Each further pause doubles, up to this. */
    static final long MAX_RETRY_MILLIS = 1_000;
    /** Attempts of one connect at most, within its connection timeout. */
    static final int MAX_ATTEMPTS = 8;
    /** Peer-to-peer: the partner may start listening later, so more attempts (the timeout usually ends them first). */
    static final int MAX_PEER_ATTEMPTS = 16;
    /**
     * {@link #close()} waits this long at most per step for the channels' loops to close them: a liveness bound for a
     * loop starved of CPU, not an expected time (a close takes a few milliseconds).
     */
    static final long CLOSE_MILLIS = 10_000;

    private final EventLoopGroup group;
    private final boolean ownGroup;
    private final Class<? extends SocketChannel> channelType;
    private final Class<? extends ServerSocketChannel> serverChannelType;
    /** Every channel made here and still open: closed by {@link #close()}. */
    private final OpenChannels open = new OpenChannels();
    private volatile boolean closed;
    /** The last failed peer-to-peer attempt of each pending connect, reported as the cause of a final timeout. */
    private final java.util.concurrent.ConcurrentHashMap<CompletableFuture<VitcpConnection>, Throwable>
            lastAttemptFailure = new java.util.concurrent.ConcurrentHashMap<>();
    /**
     * Connects whose next attempt waits on the loops' timer: {@link #close()} fails them, as the loops' shutdown
     * drops the task.
     */
    private final Set<PendingConnect> retrying = ConcurrentHashMap.newKeySet();
    /** Peer-to-peer connects waiting for the peer's ConnectRequest, by the peer they wait for: failed by close(). */
    private final ConcurrentHashMap<CompletableFuture<VitcpConnection>, InetSocketAddress> waiting =
            new ConcurrentHashMap<>();

    public ViProvider() {
        this(new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory()), true);
    }

    /** A provider over {@code group}, an NIO event loop group the caller owns. */
    public ViProvider(EventLoopGroup group) {
        this(group, false);
    }

    /**
     * A provider over {@code group}, which the caller owns, with connections of {@code channelType} and listening
     * sockets of {@code serverChannelType}: the channel types of the group's transport (epoll's, say).
     */
    public ViProvider(EventLoopGroup group, Class<? extends SocketChannel> channelType,
                      Class<? extends ServerSocketChannel> serverChannelType) {
        this(group, false, channelType, serverChannelType);
    }

    private ViProvider(EventLoopGroup group, boolean ownGroup) {
        this(group, ownGroup, NioSocketChannel.class, NioServerSocketChannel.class);
    }

    private ViProvider(EventLoopGroup group, boolean ownGroup, Class<? extends SocketChannel> channelType,
                       Class<? extends ServerSocketChannel> serverChannelType) {
        this.group = group;
        this.ownGroup = ownGroup;
        this.channelType = java.util.Objects.requireNonNull(channelType);
        this.serverChannelType = java.util.Objects.requireNonNull(serverChannelType);
    }

    /** Binds the VI/TCP listening port. {@code portConfig} gives the incoming timeout and CRC mode. */
    public ViListener listen(InetSocketAddress local, VitcpConfig portConfig) {
        return listen(local, portConfig, ch -> { });
    }

    /**
     * As {@link #listen(InetSocketAddress, VitcpConfig)}, with {@code onAccept} called for every accepted connection's
     * channel before the VI/TCP handlers are added (e.g. to admit or refuse it). Handlers it puts in front of them
     * must pass the socket's octets on unchanged: payloads are read from the socket straight into registered memory
     * (the channel's receive-buffer allocator becomes a {@link DirectReadAllocator}), past the decoder's buffers.
     */
    public ViListener listen(InetSocketAddress local, VitcpConfig portConfig,
                             java.util.function.Consumer<? super Channel> onAccept) {
        VitcpListenerTable table = new VitcpListenerTable();
        Channel server = new ServerBootstrap().group(group).channel(serverChannelType)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        open.add(ch);
                        onAccept.accept(ch);
                        DirectReadAllocator.installOn(ch);
                        ch.pipeline().addLast(new VitcpCodec(portConfig.crcMode()),
                                new VitcpPassiveHandler(table, portConfig));
                    }
                }).bind(local).syncUninterruptibly().channel();
        open.add(server);
        return new ViListener(server, table);
    }

    /** VipConnectRequest: connects {@code endpoint} to the discriminator at {@code remote}. */
    public CompletableFuture<VitcpConnection> connect(ViEndpoint endpoint, InetSocketAddress remote,
                                                      byte[] localDiscriminator, byte[] remoteDiscriminator) {
        CompletableFuture<VitcpConnection> result = new CompletableFuture<>();
        return connect(endpoint, remote, localDiscriminator, remoteDiscriminator, ch -> { });
    }

    /**
     * As {@link #connect(ViEndpoint, InetSocketAddress, byte[], byte[])}, with {@code channelHook} called with every
     * attempt's channel before the VI/TCP handlers are added (e.g. to watch the peer's first octets); what it adds
     * passes the socket's octets on unchanged, as for {@link #listen(InetSocketAddress, VitcpConfig,
     * java.util.function.Consumer)}.
     */
    public CompletableFuture<VitcpConnection> connect(ViEndpoint endpoint, InetSocketAddress remote,
                                                      byte[] localDiscriminator, byte[] remoteDiscriminator,
                                                      java.util.function.Consumer<? super Channel> channelHook) {
        CompletableFuture<VitcpConnection> result = new CompletableFuture<>();
        long deadline = System.nanoTime() + endpoint.config().connectTimeout().toNanos();
        attempt(endpoint, null, remote, localDiscriminator, remoteDiscriminator, false, deadline, result,
                java.util.Objects.requireNonNull(channelHook));
        return result;
    }

    /**
     * Peer-to-peer establishment (draft §4): the end with the higher IP address connects (and retries on
     * ConnectNoMatch until the consumer's connection timeout), the other waits on its listening port for the
     * peer's ConnectRequest and accepts it.
     */
    public CompletableFuture<VitcpConnection> connectPeer(ViEndpoint endpoint, ViListener listener,
                                                          InetSocketAddress remote, byte[] localDiscriminator,
                                                          byte[] remoteDiscriminator) {
        CompletableFuture<VitcpConnection> result = new CompletableFuture<>();
        long timeoutNanos = endpoint.config().connectTimeout().toNanos();
        InetSocketAddress local = listener.localAddress();
        if (VitcpPeerToPeer.isActive(local.getAddress(), remote.getAddress(), localDiscriminator,
                remoteDiscriminator)) {
            attempt(endpoint, new InetSocketAddress(local.getAddress(), 0), remote, localDiscriminator,
                    remoteDiscriminator, true, System.nanoTime() + timeoutNanos, result, ch -> { });
            return result;
        }
        AtomicReference<AutoCloseable> registration = new AtomicReference<>();
        registration.set(listener.table.register(localDiscriminator, endpoint.config(), true, request -> {
            if (!Arrays.equals(request.ceHeader().callingDiscriminator(), remoteDiscriminator)) {
                request.reject();
                return;
            }
            closeQuietly(registration.get());
            endpoint.accept(request).whenComplete((c, e) -> {
                if (e != null) {
                    result.completeExceptionally(e);
                } else {
                    result.complete(c);
                }
            });
        }));
        waiting.put(result, remote);
        result.whenComplete((c, e) -> {
            waiting.remove(result);
            closeQuietly(registration.get());
        });
        try {
            group.schedule(() -> {
                if (!result.isDone()) {
                    result.completeExceptionally(new VitcpConnectException(VitcpConnectException.Reason.TIMEOUT,
                            "no peer-to-peer ConnectRequest from " + remote));
                }
            }, timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException stopping) {
            failWaiting(result); // the loops are shutting down
        }
        if (closed) { // close() may have looked for waiting connects before this one was added
            failWaiting(result);
        }
        return result;
    }

    private void attempt(ViEndpoint endpoint, InetSocketAddress bind, InetSocketAddress remote, byte[] localDisc,
                         byte[] remoteDisc, boolean p2p, long deadline, CompletableFuture<VitcpConnection> result,
                         java.util.function.Consumer<? super Channel> channelHook) {
        attempt(new PendingConnect(endpoint, bind, remote, localDisc, remoteDisc, p2p, deadline, result,
                channelHook));
    }

    private void attempt(PendingConnect p) {
        CompletableFuture<VitcpConnection> result = p.result;
        if (closed) {
            failClosed(p, lastAttemptFailure.remove(result));
            return;
        }
        long remaining = p.deadline - System.nanoTime();
        if (remaining <= 0) {
            result.completeExceptionally(new VitcpConnectException(VitcpConnectException.Reason.TIMEOUT,
                    "connection timeout expired connecting to " + p.remote, lastAttemptFailure.remove(result)));
            return;
        }
        p.attempts++;
        VitcpConfig config = p.endpoint.config().toBuilder()
                .connectTimeout(java.time.Duration.ofNanos(remaining)).build();
        Bootstrap b = new Bootstrap().group(group).channel(channelType)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(remaining)));
        if (p.bind != null) {
            b.localAddress(p.bind);
        }
        var active = p.endpoint.newActiveHandler(config, p.localDisc, p.remoteDisc, p.p2p);
        b.handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                open.add(ch);
                p.channelHook.accept(ch);
                DirectReadAllocator.installOn(ch);
                ch.pipeline().addLast(new VitcpCodec(config.crcMode()), active);
            }
        });
        ChannelFuture f = b.connect(p.remote);
        f.addListener(cf -> {
            if (!cf.isSuccess()) {
                // §4.2 "TCP setup fail" -> Disconnected; a peer-to-peer partner may not be listening yet
                retryOrFail(p, new VitcpConnectException(VitcpConnectException.Reason.TCP_SETUP_FAILED,
                        "TCP connect to " + p.remote + " failed", cf.cause()));
            }
        });
        active.result().whenComplete((c, e) -> {
            if (e == null) {
                lastAttemptFailure.remove(result);
                result.complete(c);
            } else if (f.isSuccess()) {
                retryOrFail(p, e);
            }
        });
    }

    private void retryOrFail(PendingConnect p, Throwable failure) {
        CompletableFuture<VitcpConnection> result = p.result;
        InetSocketAddress remote = p.remote;
        Throwable e = failure instanceof java.util.concurrent.CompletionException ce && ce.getCause() != null
                ? ce.getCause() : failure;
        if (closed) {
            lastAttemptFailure.remove(result);
            failClosed(p, e); // a retry would not run: the provider's loops may be shut down
            return;
        }
        VitcpConnectException.Reason reason = e instanceof VitcpConnectException v ? v.reason() : null;
        if (reason == VitcpConnectException.Reason.TIMEOUT && lastAttemptFailure.get(result) != null) {
            // the timeout expired during a retry: report what the retries kept getting
            result.completeExceptionally(new VitcpConnectException(VitcpConnectException.Reason.TIMEOUT,
                    "peer-to-peer connection to " + remote + " not established within the timeout",
                    lastAttemptFailure.remove(result)));
            return;
        }
        lastAttemptFailure.put(result, e);
        // §4.2 Pending Accept: "TCP Closes - Reestablish"; §4: peer-to-peer retries ConnectNoMatch (and, our
        // extension, a partner not yet listening)
        boolean retry = reason == VitcpConnectException.Reason.CONNECTION_CLOSED
                || p.p2p && (reason == VitcpConnectException.Reason.NO_MATCH
                || reason == VitcpConnectException.Reason.TCP_SETUP_FAILED);
        // the draft bounds re-establishment only by the connection timeout; we also bound the attempts and back off
        // exponentially, so a peer that keeps closing (another framing's server, say) sees a few connections
        long pause = p.pauseMillis;
        boolean inTime = p.deadline - System.nanoTime() > TimeUnit.MILLISECONDS.toNanos(pause);
        if (retry && inTime && p.attempts < (p.p2p ? MAX_PEER_ATTEMPTS : MAX_ATTEMPTS)) {
            log.debug("VI/TCP attempt {} to {} failed ({}); re-establishing in {} ms", p.attempts, remote, reason,
                    pause);
            p.pauseMillis = Math.min(MAX_RETRY_MILLIS, pause * 2);
            scheduleRetry(p, pause, e);
        } else if (retry) {
            lastAttemptFailure.remove(result);
            result.completeExceptionally(new VitcpConnectException(VitcpConnectException.Reason.TIMEOUT,
                    "VI/TCP connection to " + remote + " not established " + (inTime ? "in " + p.attempts
                    + " attempts" : "within the timeout (" + p.attempts + " attempts)"), e));
        } else {
            lastAttemptFailure.remove(result);
            result.completeExceptionally(e);
        }
    }

    /** The next attempt of {@code p} in {@code pauseMillis}, or its failure if the provider closes meanwhile. */
    private void scheduleRetry(PendingConnect p, long pauseMillis, Throwable lastFailure) {
        retrying.add(p);
        try {
            group.schedule(() -> {
                if (retrying.remove(p)) {
                    attempt(p);
                }
            }, pauseMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            failRetry(p, lastFailure); // the loops are shutting down
        }
        if (closed) { // close() may have looked for waiting retries before this one was added
            failRetry(p, lastFailure);
        }
    }

    /** Fails {@code p}, waiting for its next attempt, unless that attempt started or it was failed already. */
    private void failRetry(PendingConnect p, Throwable lastFailure) {
        if (retrying.remove(p)) {
            Throwable last = lastAttemptFailure.remove(p.result);
            failClosed(p, last != null ? last : lastFailure);
        }
    }

    /** Fails {@code result}, a peer-to-peer connect waiting for the peer's ConnectRequest, unless it completed. */
    private void failWaiting(CompletableFuture<VitcpConnection> result) {
        InetSocketAddress remote = waiting.remove(result);
        if (remote != null) {
            result.completeExceptionally(new VitcpConnectException(VitcpConnectException.Reason.CONNECTION_CLOSED,
                    "the VI provider was closed while waiting for a peer-to-peer ConnectRequest from " + remote));
        }
    }

    private static void failClosed(PendingConnect p, Throwable cause) {
        p.result.completeExceptionally(new VitcpConnectException(VitcpConnectException.Reason.CONNECTION_CLOSED,
                "the VI provider was closed while connecting to " + p.remote, cause));
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception ignored) {
                // unregistering a discriminator does not fail
            }
        }
    }

    /**
     * Closes every listening socket and connection this provider made (their VIs end, outstanding descriptors
     * complete FLUSHED) and waits until their handlers released what they held (payload destinations in registered
     * memory, queued segments), so that regions deregistered afterwards give their memory back; a connect still
     * under way fails, one waiting to retry too. Then shuts down the event loops if the provider made them (a caller's group stays up).
     */
    @Override
    public void close() {
        closed = true;
        for (PendingConnect p : retrying) {
            failRetry(p, null);
        }
        for (CompletableFuture<VitcpConnection> result : waiting.keySet()) {
            failWaiting(result);
        }
        open.closeAll(CLOSE_MILLIS);
        if (ownGroup) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
