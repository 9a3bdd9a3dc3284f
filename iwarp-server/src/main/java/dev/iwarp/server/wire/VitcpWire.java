package dev.iwarp.server.wire;

import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.VitcpConfig;
import dev.iwarp.vitcp.VitcpConnectRequest;
import dev.iwarp.vitcp.VitcpConnection;
import dev.iwarp.vitcp.vi.CompletionQueue;
import dev.iwarp.vitcp.vi.DataSegment;
import dev.iwarp.vitcp.vi.MemoryRegion;
import dev.iwarp.vitcp.vi.ProtectionDomain;
import dev.iwarp.vitcp.vi.RecvRequest;
import dev.iwarp.vitcp.vi.SendRequest;
import dev.iwarp.vitcp.vi.ViAccess;
import dev.iwarp.vitcp.vi.ViCompletion;
import dev.iwarp.vitcp.vi.ViEndpoint;
import dev.iwarp.vitcp.vi.ViListener;
import dev.iwarp.vitcp.vi.ViOpcode;
import dev.iwarp.vitcp.vi.ViProvider;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The VI/TCP adapter (draft-dicecco-vitcp-01): the wire-neutral shapes over vitcp-codec's VI API
 * ({@code ViProvider}, {@code ViEndpoint}, VI {@code ProtectionDomain}/{@code MemoryRegion}). NIO transport.
 */
public final class VitcpWire {
    private static final Logger LOG = LoggerFactory.getLogger(VitcpWire.class);

    /** The discriminator {@code serve --wire vitcp} listens on unless told otherwise. */
    public static final String DEFAULT_DISCRIMINATOR = "rping";

    private VitcpWire() {
    }

    /** A VI protection domain as a {@link WireDomain}. */
    public static WireDomain domain(ProtectionDomain pd) {
        return new Domain(pd);
    }

    /** The VI region behind a {@link WireRegion} of this wire. */
    public static MemoryRegion memoryRegion(WireRegion r) {
        return ((Region) r).mr;
    }

    /**
     * {@code serve}'s listening side: one VI/TCP port, {@code discriminator} registered on it with {@code config}
     * (§2.2.2.2.1: all incoming VI connections arrive on one port, told apart by the discriminator).
     *
     * @param requireCrc ConnectReject a ConnectRequest without the CRC option (a passive end cannot force the CRC:
     *                   §3.6, the ConnectAccept may carry the option only if the request did)
     * @param threads    event loop threads
     */
    public static ServerWire server(VitcpConfig config, byte[] discriminator, boolean requireCrc, int threads) {
        return server(config, discriminator, requireCrc, threads, UnaryOperator.identity());
    }

    /**
     * As above, with the event loops' {@link IoHandlerFactory} passed through {@code ioHandlers} (serve's metrics
     * wrap it to measure each loop's busy time, as they do an iWARP stack's loops).
     */
    public static ServerWire server(VitcpConfig config, byte[] discriminator, boolean requireCrc, int threads,
                                    UnaryOperator<IoHandlerFactory> ioHandlers) {
        return new Server(config, discriminator, requireCrc, threads, ioHandlers);
    }

    /** The client side: {@code base} gives reliability level, MTU, CRC mode; connects to {@code discriminator}. */
    public static ClientWire client(VitcpConfig base, byte[] discriminator) {
        return new Client(base, discriminator, 1);
    }

    /** As above, with {@code threads} event loop threads for its connections. */
    public static ClientWire client(VitcpConfig base, byte[] discriminator, int threads) {
        return new Client(base, discriminator, threads);
    }

    /** "Reliable Delivery" for RELIABLE_DELIVERY (the draft's words, §3.3). */
    public static String levelName(ViReliabilityLevel level) {
        return switch (level) {
            case UNRELIABLE -> "Unreliable";
            case RELIABLE_DELIVERY -> "Reliable Delivery";
            case RELIABLE_RECEPTION -> "Reliable Reception";
        };
    }

    private static ViAccess[] map(WireAccess... access) {
        List<ViAccess> a = new ArrayList<>();
        for (WireAccess w : access) {
            if (w == WireAccess.REMOTE_READ) {
                a.add(ViAccess.RDMA_READ);
            } else if (w == WireAccess.REMOTE_WRITE) {
                a.add(ViAccess.RDMA_WRITE);
            } // LOCAL_WRITE: VI regions are always locally writable
        }
        return a.toArray(new ViAccess[0]);
    }

    private record Domain(ProtectionDomain pd) implements WireDomain {
        @Override
        public WireRegion register(ByteBuf memory, WireAccess... access) {
            return new Region(pd.register(memory, map(access)), null);
        }

        @Override
        public WireRegion registerOnDemand(int length, io.netty.buffer.ByteBufAllocator alloc, WireAccess... access) {
            ByteBuf memory = alloc.directBuffer(length, length); // VI regions have no on-demand memory: now
            memory.setZero(0, length);
            try {
                return new Region(pd.register(memory, map(access)), memory);
            } catch (RuntimeException e) {
                memory.release();
                throw e;
            }
        }
    }

    private static ProtectionDomain pdOf(WireDomain domain) {
        if (domain instanceof Domain d) {
            return d.pd;
        }
        throw new IllegalArgumentException("not a VI domain: " + domain);
    }

    private static final class Region implements WireRegion {
        final MemoryRegion mr;
        /** The memory this region allocated itself (registerOnDemand), released at deregistration; or null. */
        private final ByteBuf owned;

        Region(MemoryRegion mr, ByteBuf owned) {
            this.mr = mr;
            this.owned = owned;
        }

        @Override
        public ByteBuf memory() {
            return mr.buffer();
        }

        @Override
        public int length() {
            return mr.length();
        }

        @Override
        public long remoteAddress(int offset) {
            return mr.address() + offset;
        }

        @Override
        public int remoteHandle() {
            return mr.handle();
        }

        @Override
        public String describe() {
            return String.format("memory handle 0x%08x address 0x%016x size %d", mr.handle(), mr.address(),
                    mr.length());
        }

        @Override
        public void deregister() {
            mr.deregister();
            if (owned != null && owned.refCnt() > 0) {
                owned.release();
            }
        }
    }

    /** A VI endpoint as a {@link WireConnection}. */
    public static final class Connection implements WireConnection {
        private final ViEndpoint endpoint;
        private volatile Channel channel;
        private volatile CompletableFuture<VitcpConnection> established;

        Connection(ProtectionDomain pd, VitcpConfig config, WireCompletionListener listener) {
            CompletionQueue sendCq = new CompletionQueue();
            CompletionQueue recvCq = new CompletionQueue();
            sendCq.setListener(c -> deliver(listener, c));
            recvCq.setListener(c -> deliver(listener, c));
            this.endpoint = new ViEndpoint(pd, sendCq, recvCq, config);
        }

        private static void deliver(WireCompletionListener l, ViCompletion c) {
            boolean receive = c.opcode() == ViOpcode.RECV || c.opcode() == ViOpcode.RECV_RDMA_WRITE_WITH_IMMEDIATE;
            l.completed(c.wrId(), receive, c.ok(), (int) c.byteLength(), c.status());
        }

        public ViEndpoint endpoint() {
            return endpoint;
        }

        /** The negotiated VI/TCP parameters once established, else null. */
        public VitcpConnection vitcpConnection() {
            CompletableFuture<VitcpConnection> f = established;
            return f != null && f.isDone() && !f.isCompletedExceptionally() ? f.join() : null;
        }

        private static DataSegment segment(WireRegion local, int offset, int length) {
            return ((Region) local).mr.segment(offset, length);
        }

        @Override
        public void postRecv(long wrId, WireRegion local, int offset, int length) {
            endpoint.postRecv(RecvRequest.of(wrId, segment(local, offset, length)));
        }

        @Override
        public void postSend(long wrId, WireRegion local, int offset, int length) {
            endpoint.postSend(SendRequest.send(wrId, segment(local, offset, length)));
        }

        @Override
        public void postRdmaRead(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                                 int remoteHandle) {
            endpoint.postSend(SendRequest.rdmaRead(wrId, remoteAddress, remoteHandle, segment(local, offset, length)));
        }

        @Override
        public void postRdmaWrite(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                                  int remoteHandle) {
            endpoint.postSend(SendRequest.rdmaWrite(wrId, remoteAddress, remoteHandle,
                    segment(local, offset, length)));
        }

        @Override
        public Channel channel() {
            Channel c = channel;
            return c != null ? c : endpoint.channel();
        }

        @Override
        public void whenEstablished(Runnable action) {
            established.thenRun(action);
        }

        private VitcpConnection conn() {
            VitcpConnection c = vitcpConnection();
            if (c == null) {
                throw new IllegalStateException("VI not connected");
            }
            return c;
        }

        @Override
        public String parameters() {
            VitcpConnection c = conn();
            return "VI/TCP " + levelName(c.reliabilityLevel()) + ", CRC "
                    + (c.crcEnabled() ? "on (" + c.crcMode() + ")" : "off") + ", MTU " + c.mtu()
                    + ", RDMA Read Window " + c.rdmaReadWindow();
        }

        @Override
        public String summary() {
            VitcpConnection c = conn();
            return "VI/TCP " + levelName(c.reliabilityLevel()) + " CRC " + (c.crcEnabled() ? "on" : "off");
        }

        @Override
        public boolean crc() {
            return conn().crcEnabled();
        }

        @Override
        public int readDepth() {
            return conn().rdmaReadWindow();
        }

        @Override
        public byte[] peerData() {
            return conn().remoteDiscriminator();
        }

        @Override
        public String peerActivity() {
            dev.iwarp.vitcp.vi.ViPeerActivity a = endpoint.peerActivity();
            return a == null ? null : a.toString();
        }
    }

    /** What both ends own: the discriminator, their own event loops and the VI provider over them. */
    private abstract static class Side {
        final byte[] discriminator;
        final EventLoopGroup group;
        final ViProvider provider;
        /** The domains allocated here, whose regions {@link #close} deregisters; weak: one nobody holds is gone. */
        private final java.util.Set<ProtectionDomain> domains =
                java.util.Collections.newSetFromMap(new java.util.WeakHashMap<>());

        Side(byte[] discriminator, int threads, UnaryOperator<IoHandlerFactory> ioHandlers) {
            this.discriminator = discriminator.clone();
            this.group = new MultiThreadIoEventLoopGroup(threads, ioHandlers.apply(NioIoHandler.newFactory()));
            this.provider = new ViProvider(group);
        }

        public String name() {
            return "vitcp";
        }

        public WireDomain allocDomain() {
            ProtectionDomain pd = new ProtectionDomain();
            synchronized (domains) {
                domains.add(pd);
            }
            return domain(pd);
        }

        public void close() {
            provider.close();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            // as the iWARP device at its close: regions still registered give their buffers back (the event
            // loops have stopped, so no segment gathers from them any more)
            List<ProtectionDomain> open;
            synchronized (domains) {
                open = new ArrayList<>(domains);
                domains.clear();
            }
            open.forEach(ProtectionDomain::deregisterAll);
        }
    }

    private static final class Server extends Side implements ServerWire {
        private final VitcpConfig config;
        private final boolean requireCrc;

        Server(VitcpConfig config, byte[] discriminator, boolean requireCrc, int threads,
               UnaryOperator<IoHandlerFactory> ioHandlers) {
            super(discriminator, threads, ioHandlers);
            this.config = config;
            this.requireCrc = requireCrc;
        }

        @Override
        public Listener listen(InetSocketAddress local, Consumer<? super Channel> onAccept,
                               Consumer<WireConnectRequest> requests) {
            ViListener l = provider.listen(local, config, onAccept);
            l.register(discriminator, config, request -> {
                if (requireCrc && !request.ceHeader().crcOption()) {
                    LOG.warn("{} refused: ConnectRequest without the CRC option (--crc)", request.remoteAddress());
                    request.reject(); // §4.3 "ConnectReject - VipConnectReject"
                    return;
                }
                requests.accept(new Request(request, config));
            });
            return new Listener() {
                @Override
                public InetSocketAddress localAddress() {
                    return l.localAddress();
                }

                @Override
                public void close() {
                    l.close();
                }
            };
        }

        @Override
        public String messageHandlerName(Channel ch) {
            return ch.pipeline().context(dev.iwarp.vitcp.VitcpCodec.class).name(); // decodes whole segments
        }

        @Override
        public PeerFraming framing() {
            return PeerFraming.VITCP;
        }

        @Override
        public String transport() {
            return "nio transport";
        }

        @Override
        public String describe() {
            return "VI/TCP discriminator \"" + new String(discriminator, StandardCharsets.ISO_8859_1)
                    + "\", " + levelName(config.reliabilityLevel()) + ", CRC "
                    + (requireCrc ? "required" : config.crcOption() ? "as the client asks" : "off")
                    + (config.crcOption() ? " (" + config.crcMode() + ")" : "") + ", MTU " + config.mtu()
                    + ", RDMA Read Window " + config.rdmaReadWindow();
        }

    }

    private static final class Request implements WireConnectRequest {
        private final VitcpConnectRequest request;
        private final VitcpConfig config;

        Request(VitcpConnectRequest request, VitcpConfig config) {
            this.request = request;
            this.config = config;
        }

        @Override
        public Channel channel() {
            return request.channel();
        }

        @Override
        public WireConnection accept(WireDomain domain, WireCompletionListener listener, byte[] setupData) {
            Connection c = new Connection(pdOf(domain), config, listener);
            c.channel = request.channel();
            c.established = c.endpoint.accept(request, setupData.length > 0 ? setupData : null);
            return c;
        }

        @Override
        public void reject() {
            request.reject();
        }
    }

    private static final class Client extends Side implements ClientWire {
        private final VitcpConfig base;

        Client(VitcpConfig base, byte[] discriminator, int threads) {
            super(discriminator, threads, UnaryOperator.identity());
            this.base = base;
        }

        @Override
        public WireConnection connect(InetSocketAddress server, WireDomain domain, boolean crc, int readDepth,
                                      WireCompletionListener listener, Consumer<WireConnection> beforeStartup,
                                      long timeoutMs) throws IOException {
            VitcpConfig config = base.toBuilder().crcOption(crc || base.crcOption())
                    .rdmaReadWindow(Math.max(1, Math.min(readDepth, 0xFFFF)))
                    .connectTimeout(Duration.ofMillis(timeoutMs)).build();
            Connection c = new Connection(pdOf(domain), config, listener);
            beforeStartup.accept(c); // receives posted now are announced in the ConnectRequest (§3.2)
            FirstOctets.Watch watch = new FirstOctets.Watch(PeerFraming.VITCP);
            c.established = provider.connect(c.endpoint, server, new byte[0], discriminator, watch::install);
            try {
                c.established.get(timeoutMs + 1_000, TimeUnit.MILLISECONDS);
                c.channel = c.endpoint.channel();
                return c;
            } catch (ExecutionException e) {
                String other = watch.mismatch(server); // the server answered in another framing: say which
                throw new IOException(other != null ? other : "cannot connect to " + Addresses.format(server) + ": "
                        + e.getCause().getMessage(), e.getCause());
            } catch (TimeoutException e) {
                throw new IOException("cannot connect to " + Addresses.format(server) + ": no ConnectAccept within "
                        + timeoutMs
                        + " ms", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted connecting to " + Addresses.format(server), e);
            }
        }

    }
}
