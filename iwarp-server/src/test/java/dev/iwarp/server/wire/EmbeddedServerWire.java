package dev.iwarp.server.wire;

import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IwarpPipeline;
import dev.iwarp.verbs.RdmaDevice;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;

import java.net.InetSocketAddress;
import java.util.function.Consumer;

/**
 * serve's iWARP listening side ({@link IwarpServerWire}) on channels a test builds instead of accepted sockets: an
 * {@link EmbeddedChannel} on a clock the test moves by hand. Each one gets what an accepted connection gets, in the
 * same order (the server's accept hook, then the framing's Responder and the DDP codec), and its connection request
 * reaches the server as {@link IwarpServerWire}'s does; so serve's guard, framing, RDMA core and session run exactly
 * as on a socket, with their timers on the channel's clock.
 */
public final class EmbeddedServerWire implements ServerWire {
    private final RdmaDevice device = new RdmaDevice();
    private final Framing framing;
    private final WireFraming kind;
    private Consumer<? super Channel> onAccept;
    private Consumer<WireConnectRequest> requests;

    public EmbeddedServerWire(Framing framing) {
        this.framing = framing;
        this.kind = WireFraming.of(framing);
    }

    /** Registers {@code ch} (built unregistered) as a connection the listener accepted. */
    public void accept(EmbeddedChannel ch) throws Exception {
        if (requests == null) {
            throw new IllegalStateException("not listening");
        }
        boolean firstMessage = !framing.carriesPrivateData();
        ch.pipeline().addLast(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel c) {
                onAccept.accept(c);
                IwarpPipeline.addResponder(c.pipeline(), framing,
                        r -> requests.accept(new IwarpServerWire.Request(r, firstMessage)));
            }
        });
        ch.register();
    }

    @Override
    public String name() {
        return kind.wireName();
    }

    @Override
    public WireDomain allocDomain() {
        return IwarpWire.domain(device.allocPd());
    }

    @Override
    public Listener listen(InetSocketAddress local, Consumer<? super Channel> onAccept,
                           Consumer<WireConnectRequest> requests) {
        this.onAccept = onAccept;
        this.requests = requests;
        return new Listener() {
            @Override
            public InetSocketAddress localAddress() {
                return local;
            }

            @Override
            public void close() {
                EmbeddedServerWire.this.requests = null;
            }
        };
    }

    @Override
    public String messageHandlerName(Channel ch) {
        return IwarpPipeline.LLP;
    }

    @Override
    public FramedMessages messages() {
        return kind;
    }

    @Override
    public PeerFraming framing() {
        return kind.peerFraming();
    }

    @Override
    public String transport() {
        return "embedded channels";
    }

    @Override
    public String describe() {
        return kind.listening(framing);
    }

    @Override
    public void close() {
        device.close();
    }
}
