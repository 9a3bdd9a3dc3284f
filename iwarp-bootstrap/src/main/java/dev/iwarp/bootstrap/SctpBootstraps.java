package dev.iwarp.bootstrap;

import dev.iwarp.sctp.ShimSctpChannel;
import dev.iwarp.sctp.ShimSctpServerChannel;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelFactory;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;

/**
 * Client and server bootstraps over real SCTP for {@link IwarpStack}: the shim's
 * channels ({@code SCTP_DISABLE_FRAGMENTS}, native indication, abort), NIO event loops, and receive
 * buffers that hold any whole message (partial deliveries are joined by the completion handler anyway).
 */
final class SctpBootstraps {
    private SctpBootstraps() {
    }

    @SuppressWarnings("deprecation") // the NIO SCTP channels size their receive buffers through RCVBUF_ALLOCATOR
    static Bootstrap client(EventLoopGroup group, SctpFraming framing) {
        return new Bootstrap().group(group).channelFactory((ChannelFactory<ShimSctpChannel>) () -> new ShimSctpChannel(framing.settings()))
                .option(ChannelOption.RCVBUF_ALLOCATOR, receiveBuffers(framing))
                .localAddress(framing.localAddress());
    }

    @SuppressWarnings("deprecation")
    static ServerBootstrap server(EventLoopGroup group, SctpFraming framing) {
        return new ServerBootstrap().group(group).channelFactory((ChannelFactory<ShimSctpServerChannel>) () -> new ShimSctpServerChannel(framing.settings()))
                .childOption(ChannelOption.RCVBUF_ALLOCATOR, receiveBuffers(framing));
    }

    private static FixedRecvByteBufAllocator receiveBuffers(SctpFraming framing) {
        return new FixedRecvByteBufAllocator(framing.settings().maxChunkUserData());
    }
}
