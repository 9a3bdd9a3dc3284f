package dev.iwarp.vitcp.vi;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.iwarp.testkit.LogCapture;
import dev.iwarp.vitcp.VitcpConfig;
import dev.iwarp.vitcp.VitcpConnectException;
import dev.iwarp.vitcp.VitcpConnection;
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
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static dev.iwarp.vitcp.vi.ViPair.CLIENT;
import static dev.iwarp.vitcp.vi.ViPair.SERVER;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What is left to do once {@link ViProvider#close()} stopped the event loops it made: a connect waiting to
 * re-establish (draft-dicecco-vitcp-01 §4.2) or for its peer-to-peer partner's ConnectRequest (§4) ends with an error
 * rather than never, and closing a listener is a no-op.
 */
class ViProviderClosedLoopsTest {
    /** The liveness bound of every wait: a condition that takes longer is a failure, whatever the machine's load. */
    private static final long WAIT_SECONDS = 60;

    @Test
    void aConnectWaitingToRetryFailsWhenTheProviderCloses() throws Exception {
        VitcpConfig cfg = VitcpConfig.builder().connectTimeout(Duration.ofSeconds(120)).build();
        EventLoopGroup serverGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        Logger providerLog = (Logger) LoggerFactory.getLogger(ViProvider.class);
        Level level = providerLog.getLevel();
        providerLog.setLevel(Level.DEBUG); // its retry line says when the next attempt waits on the loops' timer
        try (LogCapture log = LogCapture.of(ViProvider.class.getName())) {
            // a server that closes every connection after our ConnectRequest: "TCP Closes" in Pending Accept
            Channel server = new ServerBootstrap().group(serverGroup).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object m) {
                                    ReferenceCountUtil.release(m);
                                    ctx.close();
                                }
                            });
                        }
                    }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            ViProvider provider = new ViProvider(); // its own loops, which its close() stops
            ViEndpoint a = new ViEndpoint(new ViProtectionDomain(), new ViCompletionQueue(), new ViCompletionQueue(),
                    cfg);
            CompletableFuture<VitcpConnection> connect = provider.connect(a,
                    (InetSocketAddress) server.localAddress(), CLIENT, SERVER);
            // the pauses double up to 1 s: this retry waits long enough for close() to find it waiting
            awaitLine(log, "re-establishing in " + ViProvider.MAX_RETRY_MILLIS + " ms");
            provider.close();
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> connect.get(WAIT_SECONDS, TimeUnit.SECONDS), "the connect never completed");
            VitcpConnectException ce = assertInstanceOf(VitcpConnectException.class, e.getCause());
            assertEquals(VitcpConnectException.Reason.CONNECTION_CLOSED, ce.reason());
            assertTrue(ce.getMessage().contains("the VI provider was closed while connecting to"), ce.getMessage());
            server.close().sync();
        } finally {
            providerLog.setLevel(level);
            serverGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /** The passive end of a peer-to-peer connect (draft §4) waits for the peer's ConnectRequest on its listener. */
    @Test
    void aPeerToPeerConnectWaitingForThePeerFailsWhenTheProviderCloses() throws Exception {
        VitcpConfig cfg = VitcpConfig.builder().connectTimeout(Duration.ofSeconds(120)).build();
        ViProvider provider = new ViProvider();
        ViListener listener = provider.listen(new InetSocketAddress("127.0.0.1", 0), cfg);
        ViEndpoint a = new ViEndpoint(new ViProtectionDomain(), new ViCompletionQueue(), new ViCompletionQueue(), cfg);
        // a peer at a higher address connects: this end only waits (nothing listens there, nothing is sent there)
        InetSocketAddress peer = new InetSocketAddress("127.0.0.2", listener.localAddress().getPort());
        CompletableFuture<VitcpConnection> connect = provider.connectPeer(a, listener, peer, SERVER, CLIENT);
        provider.close();
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> connect.get(WAIT_SECONDS, TimeUnit.SECONDS), "the connect never completed");
        VitcpConnectException ce = assertInstanceOf(VitcpConnectException.class, e.getCause());
        assertEquals(VitcpConnectException.Reason.CONNECTION_CLOSED, ce.reason());
        assertTrue(ce.getMessage().contains("the VI provider was closed while waiting for"), ce.getMessage());
    }

    @Test
    void closingAListenerAfterItsProviderClosedDoesNothing() {
        ViProvider provider = new ViProvider();
        ViListener listener = provider.listen(new InetSocketAddress("127.0.0.1", 0), VitcpConfig.builder().build());
        provider.close(); // closes the listening socket and stops the loop it ran on
        assertDoesNotThrow(listener::close);
        assertDoesNotThrow(listener::close);
    }

    private static void awaitLine(LogCapture log, String text) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (log.count(Level.DEBUG, text) == 0) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within " + WAIT_SECONDS + " s: a line containing '" + text + "'");
            }
            Thread.sleep(5);
        }
    }
}
