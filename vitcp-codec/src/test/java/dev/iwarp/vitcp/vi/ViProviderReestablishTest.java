package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.VitcpConfig;
import dev.iwarp.vitcp.VitcpConnectException;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.iwarp.vitcp.vi.ViPair.CLIENT;
import static dev.iwarp.vitcp.vi.ViPair.SERVER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Re-establishment after "TCP Closes" in Pending Accept (draft-dicecco-vitcp-01 §4.2) against a server that closes
 * every connection after our ConnectRequest (another framing's server does that): a bounded number of attempts with
 * pauses that double, not a connection every 50 ms until the timeout.
 */
class ViProviderReestablishTest {

    @Test
    void aServerThatAlwaysClosesSeesABoundedNumberOfAttemptsWithGrowingPauses() throws Exception {
        VitcpConfig cfg = VitcpConfig.builder().connectTimeout(Duration.ofSeconds(60)).build();
        List<Long> arrivals = new CopyOnWriteArrayList<>();
        AtomicInteger hooked = new AtomicInteger();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try (ViProvider provider = new ViProvider(group)) {
            Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            arrivals.add(System.nanoTime());
                            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object m) {
                                    ReferenceCountUtil.release(m);
                                    ctx.close();
                                }
                            });
                        }
                    }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            try {
                ViEndpoint a = new ViEndpoint(new ViProtectionDomain(), new ViCompletionQueue(), new ViCompletionQueue(), cfg);
                ExecutionException e = assertThrows(ExecutionException.class, () -> provider.connect(a,
                        (InetSocketAddress) server.localAddress(), CLIENT, SERVER, ch -> hooked.incrementAndGet())
                        .get(60, TimeUnit.SECONDS));
                VitcpConnectException ce = assertInstanceOf(VitcpConnectException.class, e.getCause());
                assertEquals(VitcpConnectException.Reason.TIMEOUT, ce.reason());
                assertTrue(ce.getMessage().endsWith("not established in " + ViProvider.MAX_ATTEMPTS + " attempts"),
                        ce.getMessage());
                assertEquals(ViProvider.MAX_ATTEMPTS, arrivals.size());
                assertEquals(ViProvider.MAX_ATTEMPTS, hooked.get()); // the hook saw every attempt's channel
                long pause = ViProvider.RETRY_MILLIS;
                for (int i = 1; i < arrivals.size(); i++) {
                    long gapMillis = TimeUnit.NANOSECONDS.toMillis(arrivals.get(i) - arrivals.get(i - 1));
                    // a lower bound only: a loaded machine makes the gaps longer, never shorter
                    assertTrue(gapMillis >= pause - 5, "gap " + i + " was " + gapMillis + " ms, pause " + pause);
                    pause = Math.min(ViProvider.MAX_RETRY_MILLIS, pause * 2);
                }
            } finally {
                server.close().sync();
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
