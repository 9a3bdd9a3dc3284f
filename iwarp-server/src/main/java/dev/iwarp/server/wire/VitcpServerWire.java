package dev.iwarp.server.wire;

import dev.iwarp.vitcp.VitcpCodec;
import dev.iwarp.vitcp.VitcpConfig;
import dev.iwarp.vitcp.VitcpConnectRequest;
import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.ViSegmentType;
import dev.iwarp.vitcp.vi.ViListener;
import io.netty.channel.Channel;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.IoHandlerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * {@code serve}'s listening side of {@link VitcpWire}: one VI/TCP port with one discriminator registered on it,
 * each ConnectRequest a {@link WireConnectRequest} whose accept makes a VI endpoint ({@link VitcpWire.Connection}).
 */
final class VitcpServerWire extends VitcpSide implements ServerWire {
    private static final Logger LOG = LoggerFactory.getLogger(VitcpServerWire.class);

    private final VitcpConfig config;
    private final boolean requireCrc;

    VitcpServerWire(VitcpConfig config, byte[] discriminator, boolean requireCrc, int threads,
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
                LOG.warn("{} refused: ConnectRequest without the CRC option (--crc)",
                        Addresses.printable(request.remoteAddress()));
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
        return ch.pipeline().context(VitcpCodec.class).name(); // decodes whole segments
    }

    @Override
    public FramedMessages messages() {
        return SEGMENTS;
    }

    /** VI/TCP segments: the codec says whether it holds part of one; a segment with payload or a Read moves data. */
    static final FramedMessages SEGMENTS = new FramedMessages() {
        @Override
        public BooleanSupplier partialMessage(ChannelPipeline p) {
            VitcpCodec codec = p.get(VitcpCodec.class);
            return codec == null ? null : codec::holdsIncompleteSegment;
        }

        @Override
        public boolean movesData(Object msg) {
            return !(msg instanceof ViSegment s) || s.content().isReadable()
                    || s.type() == ViSegmentType.RDMA_READ_REQUEST;
        }
    };

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
                + "\", " + VitcpWire.levelName(config.reliabilityLevel()) + ", CRC "
                + (requireCrc ? "required" : config.crcOption() ? "as the client asks" : "off")
                + (config.crcOption() ? " (" + config.crcMode() + ")" : "") + ", MTU " + config.mtu()
                + ", RDMA Read Window " + config.rdmaReadWindow();
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
            VitcpWire.Connection c = new VitcpWire.Connection(VitcpDomain.pdOf(domain), config, listener);
            c.channel = request.channel();
            c.established = c.endpoint().accept(request, setupData.length > 0 ? setupData : null);
            return c;
        }

        @Override
        public void reject() {
            request.reject();
        }
    }
}
