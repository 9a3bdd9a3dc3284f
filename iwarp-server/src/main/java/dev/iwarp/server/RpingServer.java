package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpConnectionRequest;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
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
 * {@code serve}: an MPA Responder on which every connection is an rping echo/target session
 * ({@link RpingSession}, siw-interop.md §7). With a target size it also advertises one shared
 * region (REMOTE_READ and REMOTE_WRITE) in every Reply's Private Data as a 16-octet
 * {@link Advertisement} (8-octet TO, 4-octet STag, 4-octet length, big-endian); rping ignores it.
 */
public final class RpingServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RpingServer.class);

    private final ServerConfig config;
    private final IwarpStack stack;
    private final boolean ownsStack;
    private final ProtectionDomain pd;
    private final Set<RpingSession> sessions = ConcurrentHashMap.newKeySet();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final ByteBuf targetMemory;
    private final MemoryRegion target;
    private final byte[] replyPrivateData;
    private volatile RpingSession lastSession;
    private Channel listener;

    private RpingServer(ServerConfig config, IwarpStack stack, boolean ownsStack) {
        this.config = config;
        this.stack = stack;
        this.ownsStack = ownsStack;
        this.pd = stack.allocPd();
        if (config.targetSize() > 0) {
            targetMemory = PooledByteBufAllocator.DEFAULT.directBuffer(config.targetSize(), config.targetSize());
            targetMemory.setZero(0, config.targetSize());
            target = pd.register(targetMemory, Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE);
            replyPrivateData = Advertisement.of(target.all()).toBytes();
        } else {
            targetMemory = null;
            target = null;
            replyPrivateData = new byte[0];
        }
    }

    /** Starts a server on its own {@link IwarpStack}. */
    public static RpingServer start(ServerConfig config) throws InterruptedException {
        return start(config, IwarpStack.builder().build(), true);
    }

    /** Starts a server on {@code stack}; {@code ownsStack}: {@link #close()} also closes the stack. */
    public static RpingServer start(ServerConfig config, IwarpStack stack, boolean ownsStack)
            throws InterruptedException {
        RpingServer s = new RpingServer(config, stack, ownsStack);
        try {
            s.listener = stack.listen(new InetSocketAddress(config.address(), config.port()), config.mpaSettings(),
                    s::onRequest);
        } catch (Exception e) { // includes the IOException Netty throws undeclared on a bind failure
            s.close();
            throw e;
        }
        LOG.info("iwarp-server listening on {}:{} ({} transport), MPA Rev {}, CRC {}, IRD {} ORD {}{}",
                config.address(), s.port(), stack.transport().name().toLowerCase(), config.mpaRevision(),
                config.crc() ? "forced" : "as the client asks", config.ird(), config.ord(),
                s.target != null ? ", target region " + Advertisement.of(s.target.all()) : "");
        return s;
    }

    private void onRequest(IwarpConnectionRequest request) {
        Channel ch = request.channel();
        if (sessions.size() >= config.maxConnections()) {
            refused.incrementAndGet();
            LOG.warn("{} refused: already serving {} connections (--max-connections)", ch.remoteAddress(),
                    sessions.size());
            request.reject(new byte[0]);
            return;
        }
        RpingSession session = new RpingSession(pd, ch.alloc());
        sessions.add(session);
        lastSession = session; // before the Reply leaves, so a client that got it sees the session
        accepted.incrementAndGet();
        QueuePair qp = request.accept(pd, session.sendCq(), session.recvCq(), replyPrivateData);
        session.start(qp);
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
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    public InetSocketAddress localAddress() {
        return (InetSocketAddress) listener.localAddress();
    }

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
    public MemoryRegion target() {
        return target;
    }

    /** Stops accepting, closes every session, and (if owned) shuts the stack down. */
    @Override
    public void close() {
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        for (RpingSession s : sessions) {
            s.close();
        }
        if (target != null) {
            target.deregister();
            targetMemory.release();
        }
        if (ownsStack) {
            stack.close();
        }
    }
}
