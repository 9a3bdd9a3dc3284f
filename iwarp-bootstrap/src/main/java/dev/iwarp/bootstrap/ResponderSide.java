package dev.iwarp.bootstrap;

import dev.iwarp.bootstrap.tls.TlsLayer;
import dev.iwarp.bootstrap.tls.TlsSettings;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;

import java.net.SocketAddress;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * {@link IwarpStack#listen}: a listening channel whose every accepted connection gets the stack's and the options'
 * hooks, then (inside TLS once the handshake completed, when the options say so) the framing's Responder handlers.
 */
final class ResponderSide {
    private ResponderSide() {
    }

    static Channel listen(StackChannels stack, SocketAddress local, ListenOptions options,
                          Consumer<IwarpConnectionRequest> onRequest) throws InterruptedException {
        Framing framing = options.framing();
        TlsSettings tls = options.tls();
        Consumer<? super Channel> onAccept = options.onAccept();
        Objects.requireNonNull(onRequest);
        ServerBootstrap b = stack.responderBootstrap(framing);
        Channel listener = b.childHandler(stack.initializer(onAccept, ch -> {
            if (tls == null) {
                stack.framing(p -> IwarpPipeline.addResponder(p, framing, onRequest)).accept(ch.pipeline());
            } else {
                Framing inTls = framing.overTls(TlsSettings.MAX_RECORD_PAYLOAD);
                TlsLayer.addServer(ch.pipeline(), tls,
                        stack.framing(p -> IwarpPipeline.addResponder(p, inTls, onRequest)));
            }
        })).bind(local).sync().channel();
        stack.open().add(listener);
        return listener;
    }
}
