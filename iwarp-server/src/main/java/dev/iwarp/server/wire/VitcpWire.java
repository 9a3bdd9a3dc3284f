package dev.iwarp.server.wire;

import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.VitcpConfig;
import dev.iwarp.vitcp.VitcpConnection;
import dev.iwarp.vitcp.vi.ViCompletionQueue;
import dev.iwarp.vitcp.vi.ViDataSegment;
import dev.iwarp.vitcp.vi.ViMemoryRegion;
import dev.iwarp.vitcp.vi.ViProtectionDomain;
import dev.iwarp.vitcp.vi.ViRecvRequest;
import dev.iwarp.vitcp.vi.ViSendRequest;
import dev.iwarp.vitcp.vi.ViCompletion;
import dev.iwarp.vitcp.vi.ViEndpoint;
import dev.iwarp.vitcp.vi.ViOpcode;
import io.netty.channel.Channel;
import io.netty.channel.IoHandlerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;

/**
 * The VI/TCP adapter (draft-dicecco-vitcp-01): the wire-neutral shapes over vitcp-codec's VI API
 * ({@code ViProvider}, {@code ViEndpoint}, VI {@code ViProtectionDomain}/{@code ViMemoryRegion}). NIO transport.
 * Its listening side is {@code VitcpServerWire}, its connecting side {@code VitcpClientWire}, its memory
 * {@code VitcpDomain} and {@code VitcpRegion}; each connection is a {@link Connection} over one VI endpoint.
 */
public final class VitcpWire {
    /** The discriminator {@code serve --wire vitcp} listens on unless told otherwise. */
    public static final String DEFAULT_DISCRIMINATOR = "rping";

    private VitcpWire() {
    }

    /** A VI protection domain as a {@link WireDomain}. */
    public static WireDomain domain(ViProtectionDomain pd) {
        return new VitcpDomain(pd);
    }

    /** The VI region behind a {@link WireRegion} of this wire. */
    public static ViMemoryRegion memoryRegion(WireRegion r) {
        return ((VitcpRegion) r).mr;
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
        return new VitcpServerWire(config, discriminator, requireCrc, threads, ioHandlers);
    }

    /** The client side: {@code base} gives reliability level, MTU, CRC mode; connects to {@code discriminator}. */
    public static ClientWire client(VitcpConfig base, byte[] discriminator) {
        return new VitcpClientWire(base, discriminator, 1);
    }

    /** As above, with {@code threads} event loop threads for its connections. */
    public static ClientWire client(VitcpConfig base, byte[] discriminator, int threads) {
        return new VitcpClientWire(base, discriminator, threads);
    }

    /** "Reliable Delivery" for RELIABLE_DELIVERY (the draft's words, §3.3). */
    public static String levelName(ViReliabilityLevel level) {
        return switch (level) {
            case UNRELIABLE -> "Unreliable";
            case RELIABLE_DELIVERY -> "Reliable Delivery";
            case RELIABLE_RECEPTION -> "Reliable Reception";
        };
    }

    /** A VI endpoint as a {@link WireConnection}. */
    public static final class Connection implements WireConnection {
        private final ViEndpoint endpoint;
        /** Set by the side that made it: the accepted or connected channel. */
        volatile Channel channel;
        /** Set by the side that made it: completes once the VI connection is established. */
        volatile CompletableFuture<VitcpConnection> established;

        Connection(ViProtectionDomain pd, VitcpConfig config, WireCompletionListener listener) {
            ViCompletionQueue sendCq = new ViCompletionQueue();
            ViCompletionQueue recvCq = new ViCompletionQueue();
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

        private static ViDataSegment segment(WireRegion local, int offset, int length) {
            return ((VitcpRegion) local).mr.segment(offset, length);
        }

        @Override
        public void postRecv(long wrId, WireRegion local, int offset, int length) {
            endpoint.postRecv(ViRecvRequest.of(wrId, segment(local, offset, length)));
        }

        @Override
        public void postSend(long wrId, WireRegion local, int offset, int length) {
            endpoint.postSend(ViSendRequest.send(wrId, segment(local, offset, length)));
        }

        @Override
        public void postRdmaRead(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                                 int remoteHandle) {
            endpoint.postSend(ViSendRequest.rdmaRead(wrId, remoteAddress, remoteHandle, segment(local, offset, length)));
        }

        @Override
        public void postRdmaWrite(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                                  int remoteHandle) {
            endpoint.postSend(ViSendRequest.rdmaWrite(wrId, remoteAddress, remoteHandle,
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
        public String endCause() {
            String why = endpoint.failure();
            return why == null ? null : "VI connection ended: " + why;
        }

        @Override
        public String peerActivity() {
            dev.iwarp.vitcp.vi.ViPeerActivity a = endpoint.peerActivity();
            return a == null ? null : a.toString();
        }

        @Override
        public long peerOctetsMoved() {
            dev.iwarp.vitcp.vi.ViPeerActivity a = endpoint.peerActivity();
            return a == null ? -1 : a.writeOctets() + a.readOctets() + a.sendOctets();
        }
    }
}
