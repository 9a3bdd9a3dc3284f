package dev.iwarp.bootstrap;

import io.netty.channel.Channel;
import io.netty.channel.WriteBufferWaterMark;

import java.util.function.Consumer;

/**
 * What an {@link IwarpStack} builds each connection with, on either side ({@link InitiatorSide},
 * {@link ResponderSide}): its event loops, the write-buffer water marks, the set of its open channels (closed by
 * the stack's {@code close}), and the builder's channel and framing hooks.
 */
record StackChannels(Framing.EventLoops loops, WriteBufferWaterMark waterMark, OpenChannels open,
                     Consumer<Channel> channelHook, Consumer<Channel> framingHook) {
}
