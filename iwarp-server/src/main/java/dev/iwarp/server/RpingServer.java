package dev.iwarp.server;

import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.ListenOptions;
import dev.iwarp.server.wire.FirstOctets;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.server.wire.ServerWire;
import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireConnectRequest;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
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
 * echo/target session ({@link RpingSession}, rdma-core's rping.c). With a target size it also advertises a target
 * region (REMOTE_READ and REMOTE_WRITE) as a 16-octet {@link Advertisement} (8-octet TO or virtual address, 4-octet
 * STag or memory handle, 4-octet length, big-endian): in every MPA Reply's Private Data (rping ignores it), as
 * the Calling Discriminator of every VI/TCP ConnectAccept, or over IFT (no private data) as the first Send.
 *
 * <p>Isolation: each connection has its own protection domain, session buffers and target region, zeroed,
 * registered when the connection is accepted and released when it closes, so no client reaches another's memory.
 * Over iWARP they are registered on demand: memory only from first use (the target: until the connection
 * closes; the session buffers: for one exchange), so an idle connection holds none.
 * Only {@link ServerConfig#sharedTarget()} puts every connection in one PD with one target region that any client may
 * read and overwrite.
 */
public final class RpingServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RpingServer.class);

    private final ServerConfig config;
    private final ServerWire wire;
    private final IwarpStack stack;
    /** The one PD of every connection with {@link ServerConfig#sharedTarget()}; else {@code null}. */
    private final WireDomain sharedDomain;
    private final Set<RpingSession> sessions = ConcurrentHashMap.newKeySet();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final ByteBuf targetMemory;
    private final WireRegion target;
    private final byte[] setupData;
    private volatile RpingSession lastSession;
    private final AggregatedLog refusals = new AggregatedLog(LOG, AggregatedLog.DEFAULT_WINDOW_SEC, TimeUnit.SECONDS);
    private final ConnectionGuard guard;
    private final io.netty.util.concurrent.ScheduledFuture<?> flushRefusals;
    private ServerWire.Listener listener;

    private RpingServer(ServerConfig config, ServerWire wire, IwarpStack stack) {
        this.config = config;
        this.wire = wire;
        this.stack = stack;
        this.sharedDomain = config.sharedTarget() ? wire.allocDomain() : null;
        this.guard = new ConnectionGuard(config.limits(), config.idleTimeoutSec(), config.startupTimeoutMs(), refusals);
        this.flushRefusals = io.netty.util.concurrent.GlobalEventExecutor.INSTANCE.scheduleAtFixedRate(
                () -> refusals.flush(false), 1, 1, TimeUnit.SECONDS);
        if (stack != null) {
            stack.device().setMaxReadSize(config.limits().maxReadSize()); // RDMAP: larger Reads get a Terminate
        }
        if (config.sharedTarget() && config.targetSize() > 0) {
            targetMemory = zeroed(PooledByteBufAllocator.DEFAULT, config.targetSize());
            target = registerTarget(sharedDomain, targetMemory);
            setupData = Advertisement.of(target, 0, config.targetSize()).toBytes();
        } else {
            targetMemory = null;
            target = null;
            setupData = new byte[0];
        }
    }

    private static ByteBuf zeroed(io.netty.buffer.ByteBufAllocator alloc, int size) {
        ByteBuf b = alloc.directBuffer(size, size);
        b.setZero(0, size); // pooled memory may hold an earlier connection's octets
        return b;
    }

    private static WireRegion registerTarget(WireDomain domain, ByteBuf memory) {
        return domain.register(memory, WireAccess.LOCAL_WRITE, WireAccess.REMOTE_READ, WireAccess.REMOTE_WRITE);
    }

    /** Starts an iWARP server on its own {@link IwarpStack} (MPA with {@link ServerMpaOptions#defaults()}, plain TCP). */
    public static RpingServer start(ServerConfig config) throws Exception {
        return start(config, ServeOptions.on(IwarpStack.builder().build()));
    }

    /** Starts a server as {@code options} say: on a stack (MPA, another framing, TLS) or on any other wire. */
    public static RpingServer start(ServerConfig config, ServeOptions options) throws Exception {
        if (options.wire() != null) {
            return start(config, options.wire(), null);
        }
        ListenOptions listen = (options.framing() != null ? ListenOptions.of(options.framing())
                : ListenOptions.mpa(options.mpa().settings(config))).tls(options.tls());
        return start(config, IwarpWire.server(options.stack(), listen, options.ownsStack()), options.stack());
    }

    private static RpingServer start(ServerConfig config, ServerWire wire, IwarpStack stack) throws Exception {
        RpingServer s = new RpingServer(config, wire, stack);
        try {
            s.listener = wire.listen(new InetSocketAddress(config.address(), config.port()), ch -> {
                ConnectionLogContext.install(ch, wire.name()); // conn, peer, wire on every line about ch
                ConnectionLogContext.run(ch, () -> s.guard.onAccept(ch));
                if (wire.framing() != null) { // names a peer of another framing, answers it so it can tell
                    FirstOctets.serve(ch, wire.framing(), ConnectionLogContext.NAME);
                }
            }, s::onRequest);
        } catch (Exception e) { // includes the IOException Netty throws undeclared on a bind failure
            s.close();
            throw e;
        }
        LOG.info("iwarp-server listening on {}:{} ({}), {}{}", config.address(), s.port(), wire.transport(),
                wire.describe(),
                s.target != null ? ", shared target region " + s.target.describe() + " (every client may read and"
                        + " write it)" : config.targetSize() > 0 ? ", a " + config.targetSize()
                        + "-octet target region per connection" : "");
        return s;
    }

    private void onRequest(WireConnectRequest request) {
        Channel ch = request.channel();
        if (sessions.size() >= config.maxConnections()) {
            refused.incrementAndGet();
            refusals.warn(dev.iwarp.server.wire.Addresses.printable(ch.remoteAddress()), "refused: already serving " + config.maxConnections()
                    + " connections (--max-connections)");
            request.reject(); // MPA Reply R=1; VI/TCP ConnectReject (draft-dicecco-vitcp-01 §4.3)
            return;
        }
        guard.started(ch, wire.messageHandlerName(ch), wire.messages());
        WireDomain domain = sharedDomain != null ? sharedDomain : wire.allocDomain();
        RpingSession session = new RpingSession(domain, ch.alloc(), config.echoOnly());
        byte[] advertisement = setupData;
        WireRegion own = null;
        if (sharedDomain == null && config.targetSize() > 0) {
            own = domain.registerOnDemand(config.targetSize(), ch.alloc(), WireAccess.LOCAL_WRITE,
                    WireAccess.REMOTE_READ, WireAccess.REMOTE_WRITE); // memory at the first Write or Read
            advertisement = Advertisement.of(own, 0, config.targetSize()).toBytes();
            session.target = own; // the session holds it: no map entry per connection
        }
        sessions.add(session);
        lastSession = session; // before the accept leaves, so a client that got it sees the session
        accepted.incrementAndGet();
        WireConnection conn = request.accept(domain, session, advertisement);
        session.start(conn);
        guard.countsPeerOctets(ch, conn::peerOctetsMoved);
        WireRegion ownTarget = own;
        ch.closeFuture().addListener(f -> { // one listener per connection for the server's part
            if (ownTarget != null) {
                ownTarget.deregister(); // and its memory, before the session leaves the open ones
            }
            sessions.remove(session);
            ConnectionLogContext.run(ch, () -> LOG.info("{} closed: {}", dev.iwarp.server.wire.Addresses.printable(ch.remoteAddress()), session));
        });
    }

    /** The bound TCP port. */
    public int port() {
        return listener.localAddress().getPort();
    }

    public InetSocketAddress localAddress() {
        return listener.localAddress();
    }

    /** The wire: "iwarp", "vitcp" or "ift". */
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

    /** Connections refused by --max-connections, --max-startups or --max-per-source. */
    public long refused() {
        return refused.get() + guard.refused();
    }

    /**
     * Connections refused or closed by a limit for {@code cause}; {@link RefusalCause#MEMORY_BUDGET} is the engine's
     * (an {@link dev.iwarp.verbs.RdmaObserver} counts it), always 0 here.
     */
    long refused(RefusalCause cause) {
        return cause == RefusalCause.MAX_CONNECTIONS ? refused.get() : guard.refused(cause);
    }

    /** Connections accepted by TCP and still in startup. */
    public int inStartup() {
        return guard.inStartup();
    }

    /** The shared target region, or {@code null} without {@link ServerConfig#sharedTarget()} or a target size. */
    public WireRegion target() {
        return target;
    }

    /** {@code session}'s own target region while it is open, or {@code null}. */
    public WireRegion targetOf(RpingSession session) {
        return sessions.contains(session) ? session.target : null;
    }

    /** Stops accepting, closes every session, and closes the wire (and an owned stack). */
    @Override
    public void close() {
        if (listener != null) {
            listener.close();
        }
        flushRefusals.cancel(false);
        refusals.flush(true);
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
