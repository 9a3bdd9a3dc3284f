package dev.iwarp.bootstrap;

import dev.iwarp.framing.OpenChannels;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.WriteBufferWaterMark;

import java.util.function.Consumer;

/**
 * What an {@link IwarpStack} builds each connection with, on either side ({@link InitiatorSide},
 * {@link ResponderSide}): its event loops, the write-buffer water marks, the set of its open channels (closed by
 * the stack's {@code close}), and the builder's channel and framing hooks; and the preamble both sides give every
 * connection with them.
 */
record StackChannels(Framing.EventLoops loops, WriteBufferWaterMark waterMark, OpenChannels open,
                     Consumer<Channel> channelHook, Consumer<Channel> framingHook) {

    /** {@code framing}'s Initiator bootstrap on the stack's event loops; its connections get the water marks. */
    Bootstrap initiatorBootstrap(Framing framing) {
        Bootstrap b = framing.initiatorBootstrap(loops);
        b.option(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark);
        return b;
    }

    /** {@code framing}'s Responder bootstrap on the stack's event loops; its connections get the water marks. */
    ServerBootstrap responderBootstrap(Framing framing) {
        ServerBootstrap b = framing.responderBootstrap(loops);
        b.childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark);
        return b;
    }

    /**
     * A connection's initializer: the channel joins the stack's open channels, gets the stack's channel hook, then
     * {@code optionsHook} (the connect or listen options' own), then {@code handlers} (the side's).
     */
    ChannelInitializer<Channel> initializer(Consumer<? super Channel> optionsHook, Consumer<Channel> handlers) {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                open.add(ch);
                channelHook.accept(ch);
                optionsHook.accept(ch);
                handlers.accept(ch);
            }
        };
    }

    /** {@code handlers} (a framing's, on a plain or TLS pipeline) behind the stack's framing hook. */
    Consumer<ChannelPipeline> framing(Consumer<ChannelPipeline> handlers) {
        return p -> {
            framingHook.accept(p.channel());
            handlers.accept(p);
        };
    }
}
