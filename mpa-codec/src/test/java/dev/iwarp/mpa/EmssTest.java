package dev.iwarp.mpa;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Where MULPDU's EMSS comes from (RFC 5044 §4.5) when the transport has no TCP_MAXSEG (NIO). */
class EmssTest {
    @Test
    void nioLoopbackUsesTheInterfaceMtuLessHeadersAndTimestamps() throws Exception {
        int mtu = NetworkInterface.getByInetAddress(InetAddress.getByName("127.0.0.1")).getMTU();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInboundHandlerAdapter()).bind(new InetSocketAddress("127.0.0.1", 0))
                    .sync().channel();
            Channel client = new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .handler(new ChannelInboundHandlerAdapter()).connect(server.localAddress()).sync().channel();
            // IPv4 20 + TCP 20 + timestamp option 12; loopback's MTU (65536) gives 65484, not the 1460 fallback
            assertEquals(Math.min(0xFFFF, mtu - 52), Emss.of(client, 0));
            assertEquals(1000, Emss.of(client, 1000), "a configured EMSS wins");
            client.close().sync();
            server.close().sync();
        } finally {
            group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void withoutAnInterfaceTheDefaultApplies() {
        EmbeddedChannel ch = new EmbeddedChannel();
        assertEquals(MpaSettings.DEFAULT_EMSS, Emss.of(ch, 0));
        ch.finishAndReleaseAll();
    }
}
