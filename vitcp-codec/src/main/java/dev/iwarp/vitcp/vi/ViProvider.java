package dev.iwarp.vitcp.vi;

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
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The VI/TCP provider: TCP connection setup and listening around the VI/TCP handlers (VIPL VipConnectRequest,
 * VipConnectWait/Accept/Reject, VipConnectPeerRequest). NIO transport.
 */
public final class ViProvider implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ViProvider.class);
    /** Pause between peer-to-peer attempts after ConnectNoMatch (draft §4). */
    static final long RETRY_MILLIS = 50;

    private final EventLoopGroup group;
    private final boolean ownGroup;
    /** The last failed peer-to-peer attempt of each pending connect, reported as the cause of a final timeout. */
    private final java.util.concurrent.ConcurrentHashMap<CompletableFuture<VitcpConnection>, Throwable>
            lastAttemptFailure = new java.util.concurrent.ConcurrentHashMap<>();

    public ViProvider() {
        this(new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory()), true);
    }

    public ViProvider(EventLoopGroup group) {
        this(group, false);
    }

    private ViProvider(EventLoopGroup group, boolean ownGroup) {
        this.group = group;
        this.ownGroup = ownGroup;
    }

    /** Binds the VI/TCP listening port. {@code portConfig} gives the incoming timeout and CRC mode. */
    public ViListener listen(InetSocketAddress local, VitcpConfig portConfig) {
        return listen(local, portConfig, ch -> { });
    }

    /**
     * As {@link #listen(InetSocketAddress, VitcpConfig)}, with {@code onAccept} called for every accepted connection's
     * channel before the VI/TCP handlers are added (e.g. to admit or refuse it).
     */
    public ViListener listen(InetSocketAddress local, VitcpConfig portConfig,
                             java.util.function.Consumer<? super Channel> onAccept) {
        VitcpListenerTable table = new VitcpListenerTable();
        Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        onAccept.accept(ch);
                        ch.pipeline().addLast(new VitcpCodec(portConfig.crcMode()),
                                new VitcpPassiveHandler(table, portConfig));
                    }
                }).bind(local).syncUninterruptibly().channel();
        return new ViListener(server, table);
    }

    /** VipConnectRequest: connects {@code endpoint} to the discriminator at {@code remote}. */
    public CompletableFuture<VitcpConnection> connect(ViEndpoint endpoint, InetSocketAddress remote,
                                                      byte[] localDiscriminator, byte[] remoteDiscriminator) {
        CompletableFuture<VitcpConnection> result = new CompletableFuture<>();
        long deadline = System.nanoTime() + endpoint.config().connectTimeout().toNanos();
        attempt(endpoint, null, remote, localDiscriminator, remoteDiscriminator, false, deadline, result);
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
                    remoteDiscriminator, true, System.nanoTime() + timeoutNanos, result);
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
        group.schedule(() -> {
            if (!result.isDone()) {
                closeQuietly(registration.get());
                result.completeExceptionally(new VitcpConnectException(VitcpConnectException.Reason.TIMEOUT,
                        "no peer-to-peer ConnectRequest from " + remote));
            }
        }, timeoutNanos, TimeUnit.NANOSECONDS);
        return result;
    }

    private void attempt(ViEndpoint endpoint, InetSocketAddress bind, InetSocketAddress remote, byte[] localDisc,
                         byte[] remoteDisc, boolean p2p, long deadline, CompletableFuture<VitcpConnection> result) {
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
            result.completeExceptionally(new VitcpConnectException(VitcpConnectException.Reason.TIMEOUT,
                    "connection timeout expired connecting to " + remote, lastAttemptFailure.remove(result)));
            return;
        }
        VitcpConfig config = endpoint.config().toBuilder()
                .connectTimeout(java.time.Duration.ofNanos(remaining)).build();
        Bootstrap b = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(remaining)));
        if (bind != null) {
            b.localAddress(bind);
        }
        var active = endpoint.newActiveHandler(config, localDisc, remoteDisc, p2p);
        b.handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(new VitcpCodec(config.crcMode()), active);
            }
        });
        ChannelFuture f = b.connect(remote);
        f.addListener(cf -> {
            if (!cf.isSuccess()) {
                // §4.2 "TCP setup fail" -> Disconnected; a peer-to-peer partner may not be listening yet
                retryOrFail(endpoint, bind, remote, localDisc, remoteDisc, p2p, deadline, result,
                        new VitcpConnectException(VitcpConnectException.Reason.TCP_SETUP_FAILED,
                                "TCP connect to " + remote + " failed", cf.cause()));
            }
        });
        active.result().whenComplete((c, e) -> {
            if (e == null) {
                lastAttemptFailure.remove(result);
                result.complete(c);
            } else if (f.isSuccess()) {
                retryOrFail(endpoint, bind, remote, localDisc, remoteDisc, p2p, deadline, result, e);
            }
        });
    }

    private void retryOrFail(ViEndpoint endpoint, InetSocketAddress bind, InetSocketAddress remote, byte[] localDisc,
                             byte[] remoteDisc, boolean p2p, long deadline, CompletableFuture<VitcpConnection> result,
                             Throwable failure) {
        Throwable e = failure instanceof java.util.concurrent.CompletionException ce && ce.getCause() != null
                ? ce.getCause() : failure;
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
                || p2p && (reason == VitcpConnectException.Reason.NO_MATCH
                || reason == VitcpConnectException.Reason.TCP_SETUP_FAILED);
        if (retry && deadline - System.nanoTime() > TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS)) {
            // draft §4: ConnectNoMatch during peer establishment -> repeated attempts until the timeout
            log.debug("VI/TCP attempt to {} failed ({}); re-establishing", remote, reason);
            group.schedule(() -> attempt(endpoint, bind, remote, localDisc, remoteDisc, p2p, deadline, result),
                    RETRY_MILLIS, TimeUnit.MILLISECONDS);
        } else if (retry) {
            lastAttemptFailure.remove(result);
            result.completeExceptionally(new VitcpConnectException(VitcpConnectException.Reason.TIMEOUT,
                    "VI/TCP connection to " + remote + " not established within the timeout", e));
        } else {
            lastAttemptFailure.remove(result);
            result.completeExceptionally(e);
        }
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

    @Override
    public void close() {
        if (ownGroup) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
