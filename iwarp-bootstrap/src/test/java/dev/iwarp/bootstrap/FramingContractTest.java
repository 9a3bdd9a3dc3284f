package dev.iwarp.bootstrap;

import dev.iwarp.ift.IftSettings;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.sctp.SctpSettings;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.Channel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What each framing tells the stack about itself: its channels and whether its startup carries private data. */
class FramingContractTest {
    @Test
    void onlyMpaCarriesPrivateData() {
        assertTrue(MpaFraming.of(MpaSettings.defaults()).carriesPrivateData()); // RFC 5044 §7.1 Request/Reply
        assertFalse(IftFraming.of(IftSettings.defaults()).carriesPrivateData());
        assertFalse(SctpFraming.of(SctpSettings.builder().build()).carriesPrivateData());
    }

    @Test
    void tcpFramingsUseTheStackTransportAndSctpItsNioLoops() {
        EventLoopGroup tcp = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        EventLoopGroup nio = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            Framing.EventLoops loops = new Framing.EventLoops() {
                @Override
                public EventLoopGroup group() {
                    return tcp;
                }

                @Override
                public Transport transport() {
                    return Transport.NIO;
                }

                @Override
                public EventLoopGroup nioGroup() {
                    return nio;
                }
            };
            for (Framing f : new Framing[] {MpaFraming.of(MpaSettings.defaults()), IftFraming.of(IftSettings.defaults())}) {
                Bootstrap b = f.initiatorBootstrap(loops);
                assertSame(tcp, b.config().group());
                assertEquals(NioSocketChannel.class, channelClass(b.config().channelFactory()));
                assertEquals(Boolean.TRUE, b.config().options().get(ChannelOption.TCP_NODELAY));
                ServerBootstrap s = f.responderBootstrap(loops);
                assertSame(tcp, s.config().group());
                assertEquals(Boolean.TRUE, s.config().childOptions().get(ChannelOption.TCP_NODELAY));
                assertEquals(NioServerSocketChannel.class, channelClass(s.config().channelFactory()));
            }
            SctpFraming sctp = SctpFraming.of(SctpSettings.builder().build());
            assertSame(nio, sctp.initiatorBootstrap(loops).config().group());
            assertSame(nio, sctp.responderBootstrap(loops).config().group());
        } finally {
            tcp.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
            nio.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** The class of the channels {@code factory} makes (one made, never registered, closed). */
    @SuppressWarnings("deprecation") // the config hands out the older bootstrap.ChannelFactory type
    private static Class<?> channelClass(io.netty.bootstrap.ChannelFactory<? extends Channel> factory) {
        Channel ch = factory.newChannel();
        try {
            return ch.getClass();
        } finally {
            ch.unsafe().closeForcibly(); // never registered: no event loop to close it on
        }
    }
}
