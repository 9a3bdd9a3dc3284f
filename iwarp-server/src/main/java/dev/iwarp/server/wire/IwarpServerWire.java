package dev.iwarp.server.wire;

import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IwarpConnectionRequest;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.ListenOptions;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import io.netty.channel.Channel;

import java.net.InetSocketAddress;
import java.util.function.Consumer;

/**
 * {@code serve}'s listening side of {@link IwarpWire}: {@code IwarpStack.listen} as Responder of a {@link WireFraming}
 * (MPA, IFT, SCTP), each connection request a {@link WireConnectRequest} whose accept binds a queue pair to an
 * {@link IwarpWire.Connection}.
 */
final class IwarpServerWire implements ServerWire {
    private final IwarpStack stack;
    private final WireFraming kind;
    private final Framing framing;
    private final boolean ownsStack;
    private final TlsSettings tls;
    private final ListenOptions options;

    IwarpServerWire(IwarpStack stack, ListenOptions options, boolean ownsStack) {
        this.stack = stack;
        this.options = options;
        this.framing = options.framing();
        this.kind = WireFraming.of(framing);
        this.ownsStack = ownsStack;
        this.tls = options.tls();
    }

    @Override
    public String name() {
        return kind.wireName();
    }

    @Override
    public WireDomain allocDomain() {
        return IwarpWire.domain(stack.allocPd());
    }

    @Override
    public String messageHandlerName(Channel ch) {
        return dev.iwarp.bootstrap.IwarpPipeline.LLP; // it hands each ULPDU to DDP
    }

    @Override
    public Listener listen(InetSocketAddress local, Consumer<? super Channel> onAccept,
                           Consumer<WireConnectRequest> requests) throws Exception {
        boolean firstMessage = !framing.carriesPrivateData();
        return Listener.of(stack.listen(local, options.onAccept(ch -> {
                    options.onAccept().accept(ch);
                    onAccept.accept(ch);
                }),
                r -> requests.accept(new Request(r, firstMessage))));
    }

    @Override
    public FramedMessages messages() {
        return kind;
    }

    @Override
    public PeerFraming framing() {
        // inside TLS, TLS refuses a plaintext peer itself (and tells an MPA client so in a Reply)
        return tls != null ? null : kind.peerFraming();
    }

    @Override
    public String transport() {
        return kind.transport(stack);
    }

    @Override
    public String describe() {
        return kind.listening(framing) + (tls != null ? ", inside " + tls : "");
    }

    @Override
    public void close() {
        if (ownsStack) {
            stack.close();
        }
    }

    static final class Request implements WireConnectRequest {
        private final IwarpConnectionRequest request;
        /** The framing carries no private data: the setup data travels as the first Send. */
        private final boolean firstMessage;

        Request(IwarpConnectionRequest request, boolean firstMessage) {
            this.request = request;
            this.firstMessage = firstMessage;
        }

        @Override
        public Channel channel() {
            return request.channel();
        }

        @Override
        public WireConnection accept(WireDomain domain, WireCompletionListener listener, byte[] setupData) {
            IwarpWire.Connection c = IwarpWire.connection(listener);
            ProtectionDomain pd = IwarpDomain.pdOf(domain);
            QueuePair qp = request.accept(pd, c.sendCq(), c.recvCq(), setupData);
            return c.attach(firstMessage ? SetupMessage.postFirst(c, pd, qp, setupData) : qp);
        }

        @Override
        public void reject() {
            request.reject(new byte[0]);
        }
    }
}
