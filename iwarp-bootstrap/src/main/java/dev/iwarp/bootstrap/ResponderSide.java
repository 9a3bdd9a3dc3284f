package dev.iwarp.bootstrap;

import dev.iwarp.bootstrap.tls.TlsLayer;
import dev.iwarp.bootstrap.tls.TlsSettings;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;

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
        ServerBootstrap b = framing.responderBootstrap(stack.loops());
        b.childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, stack.waterMark());
        Channel listener = b.childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        stack.open().add(ch);
                        stack.channelHook().accept(ch);
                        onAccept.accept(ch);
                        if (tls == null) {
                            stack.framingHook().accept(ch);
                            IwarpPipeline.addResponder(ch.pipeline(), framing, onRequest);
                        } else {
                            Framing inTls = framing.overTls(TlsSettings.MAX_RECORD_PAYLOAD);
                            TlsLayer.addServer(ch.pipeline(), tls, p -> {
                                stack.framingHook().accept(ch);
                                IwarpPipeline.addResponder(p, inTls, onRequest);
                            });
                        }
                    }
                }).bind(local).sync().channel();
        stack.open().add(listener);
        return listener;
    }
}
