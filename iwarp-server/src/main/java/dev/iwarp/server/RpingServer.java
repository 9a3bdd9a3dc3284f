package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.server.wire.ServerWire;
import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireConnectRequest;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code serve}: every connection of a {@link ServerWire} (MPA Responder, or VI/TCP passive end) is an rping
 * echo/target session ({@link RpingSession}, siw-interop.md §7). With a target size it also advertises one shared
 * region (REMOTE_READ and REMOTE_WRITE) as a 16-octet {@link Advertisement} (8-octet TO or virtual address, 4-octet
 * STag or memory handle, 4-octet length, big-endian): in every MPA Reply's Private Data (rping ignores it), or as
 * the Calling Discriminator of every VI/TCP ConnectAccept.
 */
public final class RpingServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RpingServer.class);

    private final ServerConfig config;
    private final ServerWire wire;
    private final IwarpStack stack;
    private final WireDomain domain;
    private final Set<RpingSession> sessions = ConcurrentHashMap.newKeySet();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final ByteBuf targetMemory;
    private final WireRegion target;
    private final byte[] setupData;
    private volatile RpingSession lastSession;
    private ServerWire.Listener listener;

    private RpingServer(ServerConfig config, ServerWire wire, IwarpStack stack) {
        this.config = config;
        this.wire = wire;
        this.stack = stack;
        this.domain = wire.allocDomain();
        if (config.targetSize() > 0) {
            targetMemory = PooledByteBufAllocator.DEFAULT.directBuffer(config.targetSize(), config.targetSize());
            targetMemory.setZero(0, config.targetSize());
            target = domain.register(targetMemory, WireAccess.LOCAL_WRITE, WireAccess.REMOTE_READ,
                    WireAccess.REMOTE_WRITE);
            setupData = Advertisement.of(target, 0, config.targetSize()).toBytes();
        } else {
            targetMemory = null;
            target = null;
            setupData = new byte[0];
        }
    }

    /** Starts an iWARP server on its own {@link IwarpStack}. */
    public static RpingServer start(ServerConfig config) throws Exception {
        return start(config, IwarpStack.builder().build(), true);
    }

    /** Starts an iWARP server on {@code stack}; {@code ownsStack}: {@link #close()} also closes the stack. */
    public static RpingServer start(ServerConfig config, IwarpStack stack, boolean ownsStack) throws Exception {
        return start(config, IwarpWire.server(stack, config.mpaSettings(), ownsStack), stack);
    }

    /** As above, every connection inside TLS with {@code tls} (plain TCP when null). */
    public static RpingServer start(ServerConfig config, IwarpStack stack, boolean ownsStack,
                                    dev.iwarp.bootstrap.tls.TlsSettings tls) throws Exception {
        return start(config, IwarpWire.server(stack, config.mpaSettings(), ownsStack, tls), stack);
    }

    /** Starts a server on {@code wire}, which {@link #close()} closes. */
    public static RpingServer start(ServerConfig config, ServerWire wire) throws Exception {
        return start(config, wire, null);
    }

    private static RpingServer start(ServerConfig config, ServerWire wire, IwarpStack stack) throws Exception {
        RpingServer s = new RpingServer(config, wire, stack);
        try {
            s.listener = wire.listen(new InetSocketAddress(config.address(), config.port()), s::onRequest);
        } catch (Exception e) { // includes the IOException Netty throws undeclared on a bind failure
            s.close();
            throw e;
        }
        LOG.info("iwarp-server listening on {}:{} ({}{}", config.address(), s.port(), wire.describe(),
                s.target != null ? ", target region " + s.target.describe() : "");
        return s;
    }

    private void onRequest(WireConnectRequest request) {
        Channel ch = request.channel();
        if (sessions.size() >= config.maxConnections()) {
            refused.incrementAndGet();
            LOG.warn("{} refused: already serving {} connections (--max-connections)", ch.remoteAddress(),
                    sessions.size());
            request.reject(); // MPA Reply R=1; VI/TCP ConnectReject (draft-dicecco-vitcp-01 §4.3)
            return;
        }
        RpingSession session = new RpingSession(domain, ch.alloc(), config.echoOnly());
        sessions.add(session);
        lastSession = session; // before the accept leaves, so a client that got it sees the session
        accepted.incrementAndGet();
        session.start(request.accept(domain, session, setupData));
        if (config.idleTimeoutSec() > 0) {
            ch.pipeline().addFirst("idle-close", new ChannelInboundHandlerAdapter() {
                @Override
                public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                    if (evt instanceof IdleStateEvent) {
                        LOG.info("{} idle for {} s; closing", ctx.channel().remoteAddress(), config.idleTimeoutSec());
                        ctx.close();
                    } else {
                        ctx.fireUserEventTriggered(evt);
                    }
                }
            });
            ch.pipeline().addFirst("idle", new IdleStateHandler(0, 0, config.idleTimeoutSec(), TimeUnit.SECONDS));
        }
        ch.closeFuture().addListener(f -> {
            sessions.remove(session);
            LOG.info("{} closed: {}", ch.remoteAddress(), session);
        });
    }

    /** The bound TCP port. */
    public int port() {
        return listener.localAddress().getPort();
    }

    public InetSocketAddress localAddress() {
        return listener.localAddress();
    }

    /** The wire: "iwarp" or "vitcp". */
    public ServerWire wire() {
        return wire;
    }

    /** The iWARP stack, or null on another wire. */
    public IwarpStack stack() {
        return stack;
    }

    /** Sessions currently open. */
    public List<RpingSession> sessions() {
        return List.copyOf(sessions);
    }

    /** The most recently accepted session (also after it closed; its buffer is then released). */
    public RpingSession lastSession() {
        return lastSession;
    }

    /** Connections accepted so far. */
    public long accepted() {
        return accepted.get();
    }

    /** Connections refused by --max-connections. */
    public long refused() {
        return refused.get();
    }

    /** The advertised target region, or {@code null} without --target-size. */
    public WireRegion target() {
        return target;
    }

    /** Stops accepting, closes every session, and closes the wire (and an owned stack). */
    @Override
    public void close() {
        if (listener != null) {
            listener.close();
        }
        for (RpingSession s : sessions) {
            s.close();
        }
        if (target != null) {
            target.deregister();
            targetMemory.release();
        }
        wire.close();
    }
}
