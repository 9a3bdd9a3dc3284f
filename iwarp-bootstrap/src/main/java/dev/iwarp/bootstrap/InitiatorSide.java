package dev.iwarp.bootstrap;

import dev.iwarp.bootstrap.tls.TlsLayer;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.rdmap.engine.RdmaEngine;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelPipeline;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.Promise;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.SocketAddress;
import java.util.function.Consumer;

/**
 * {@link IwarpStack#connect}: a connection as the framing's Initiator (inside TLS when the options say so), its
 * RDMAP engine bound once the framing's startup completed, and the one retry on a new connection that a framing
 * may name after a failed startup (RFC 6581 §5: MPA Rev 1 after a peer closed on our Rev 2 Request).
 */
final class InitiatorSide {
    /** The stack's logger: its lines keep one name whichever class writes them. */
    private static final Logger LOG = LoggerFactory.getLogger(IwarpStack.class);

    private InitiatorSide() {
    }

    static Future<QueuePair> connect(StackChannels stack, SocketAddress remote, ConnectOptions options) {
        Promise<QueuePair> result = GlobalEventExecutor.INSTANCE.newPromise();
        attempt(stack, remote, options, result, true);
        return result;
    }

    private static void attempt(StackChannels stack, SocketAddress remote, ConnectOptions options,
                                Promise<QueuePair> result, boolean first) {
        RdmaEngine engine = options.configure(new RdmaEngine(options.pd(), options.sendCq(), options.recvCq()));
        options.beforeStartupCallback().accept(engine.queuePair());
        Bootstrap b = stack.initiatorBootstrap(options.framing());
        ChannelFuture cf = b.handler(stack.initializer(options.channelHook(), ch -> {
            TlsSettings tls = options.tls();
            Framing framing = tls == null ? options.framing()
                    : options.framing().overTls(TlsSettings.MAX_RECORD_PAYLOAD);
            Consumer<ChannelPipeline> iwarp = stack.framing(p -> {
                IwarpPipeline.addInitiator(p, framing);
                IwarpPipeline.bindEngine(p, engine);
            });
            if (tls == null) {
                iwarp.accept(ch.pipeline());
            } else {
                TlsLayer.addClient(ch.pipeline(), tls, remote, iwarp).addListener(h -> {
                    if (!h.isSuccess()) {
                        result.tryFailure(h.cause());
                    }
                });
            }
        })).connect(remote);
        cf.addListener(f -> {
            if (!f.isSuccess()) {
                result.tryFailure(f.cause());
                return;
            }
            engine.queuePair().established().addListener(e -> {
                if (e.isSuccess()) {
                    result.trySuccess(engine.queuePair());
                } else {
                    // no queue pair: a rejected (R=1) connection is left open by MPA for its ULP, which is us;
                    // what the framing still sends on failure (RFC 6581 errors 6, 7: a Terminate) goes first
                    closeAfterPendingWrites(cf.channel());
                    // a TLS failure after the handshake (e.g. our certificate refused) is the real cause
                    Throwable tlsFailure = options.tls() == null ? null : TlsLayer.failure(cf.channel());
                    Framing retry = first && tlsFailure == null ? options.framing().retryAfter(e.cause()) : null;
                    if (retry != null) {
                        LOG.info("{} refused {}; retrying with {}", remote, options.framing().name(), retry.name());
                        attempt(stack, remote, options.framing(retry), result, false);
                    } else {
                        result.tryFailure(tlsFailure != null ? tlsFailure : e.cause());
                    }
                }
            });
        });
    }

    /**
     * Closes {@code ch} once the framing's failure handling has run and what it wrote is on the wire:
     * an empty buffer written at the head completes after everything written before it.
     */
    private static void closeAfterPendingWrites(Channel ch) {
        ch.eventLoop().execute(() -> {
            if (ch.isOpen()) {
                ch.pipeline().firstContext().writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            }
        });
    }
}
