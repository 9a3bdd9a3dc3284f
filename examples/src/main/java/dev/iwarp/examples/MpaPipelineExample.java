package dev.iwarp.examples;

import dev.iwarp.mpa.MpaConnectRequest;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.mpa.MpaStartupCompletionEvent;
import dev.iwarp.mpa.MpaStartupHandler;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * MPA (RFC 5044) in a plain Netty pipeline, no RDMA: {@link ServerInitializer} answers every MPA Request
 * with a Reply carrying Private Data and echoes each ULPDU; {@link ClientInitializer} sends one ULPDU once
 * startup is done and completes a future with the echo. Each ULPDU travels as one FPDU (CRC32C, markers
 * if negotiated); the handlers above MPA only ever see whole ULPDUs.
 */
public final class MpaPipelineExample {
    private MpaPipelineExample() {
    }

    /** The Responder's pipeline: MPA, then an echo of every ULPDU. */
    public static final class ServerInitializer extends ChannelInitializer<SocketChannel> {
        private final MpaSettings settings;
        private final byte[] replyPrivateData;

        /**
         * @param settings         the Responder's MPA settings
         * @param replyPrivateData what every MPA Reply carries as Private Data
         */
        public ServerInitializer(MpaSettings settings, byte[] replyPrivateData) {
            this.settings = settings;
            this.replyPrivateData = replyPrivateData.clone();
        }

        @Override
        protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(MpaStartupHandler.responder(settings), new ChannelInboundHandlerAdapter() {
                @Override
                public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                    if (evt instanceof MpaConnectRequest request) {
                        request.accept(replyPrivateData); // or reject(...): a Reply with R=1
                    }
                    ctx.fireUserEventTriggered(evt);
                }

                @Override
                public void channelRead(ChannelHandlerContext ctx, Object ulpdu) {
                    ctx.writeAndFlush(ulpdu); // one ByteBuf per FPDU; the write releases it
                }
            });
        }
    }

    /** The Initiator's pipeline: MPA, then one ULPDU sent after startup; the echo completes {@link #echo()}. */
    public static final class ClientInitializer extends ChannelInitializer<SocketChannel> {
        private final MpaSettings settings;
        private final String message;
        private final CompletableFuture<String> echo = new CompletableFuture<>();
        private final CompletableFuture<byte[]> replyPrivateData = new CompletableFuture<>();

        /**
         * @param settings the Initiator's MPA settings
         * @param message  the ULPDU sent once the MPA startup completed
         */
        public ClientInitializer(MpaSettings settings, String message) {
            this.settings = settings;
            this.message = message;
        }

        /** @return completes with the echoed ULPDU, or fails when startup fails or the connection ends first */
        public CompletableFuture<String> echo() {
            return echo;
        }

        /** @return completes with the Private Data of the Responder's MPA Reply */
        public CompletableFuture<byte[]> replyPrivateData() {
            return replyPrivateData;
        }

        @Override
        protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(MpaStartupHandler.initiator(settings), new ChannelInboundHandlerAdapter() {
                @Override
                public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                    if (evt instanceof MpaStartupCompletionEvent done) {
                        if (!done.isSuccess()) {
                            echo.completeExceptionally(done.cause());
                            return;
                        }
                        replyPrivateData.complete(done.parameters().peerPrivateData());
                        ctx.writeAndFlush(ctx.alloc().buffer().writeBytes(message.getBytes(StandardCharsets.UTF_8)));
                    }
                }

                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    ByteBuf ulpdu = (ByteBuf) msg;
                    try {
                        echo.complete(ulpdu.toString(StandardCharsets.UTF_8));
                    } finally {
                        ulpdu.release();
                    }
                }

                @Override
                public void channelInactive(ChannelHandlerContext ctx) {
                    echo.completeExceptionally(new IllegalStateException("connection closed before the echo"));
                }
            });
        }
    }

    /**
     * Runs the example and prints what happens.
     *
     * @param args ignored
     * @throws Exception if any step fails
     */
    public static void main(String[] args) throws Exception {
        run("hello over MPA", System.out);
    }

    /**
     * A server and a client on loopback with the two initializers; the client sends {@code message}.
     *
     * @param message the ULPDU to send
     * @param out     where the steps are printed
     * @return the echo the client received
     * @throws Exception if a step fails or takes longer than ten seconds
     */
    public static String run(String message, PrintStream out) throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            MpaSettings settings = MpaSettings.builder().crc(true).build();
            Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ServerInitializer(settings, "welcome".getBytes(StandardCharsets.US_ASCII)))
                    .bind("127.0.0.1", 0).sync().channel();
            InetSocketAddress where = (InetSocketAddress) server.localAddress(); // 127.0.0.1:PORT, not /127.0.0.1:PORT
            out.println("server: MPA Responder on " + where.getHostString() + ":" + where.getPort());
            ClientInitializer client = new ClientInitializer(settings, message);
            Channel ch = new Bootstrap().group(group).channel(NioSocketChannel.class).handler(client)
                    .connect(server.localAddress()).sync().channel();
            byte[] welcome = client.replyPrivateData().get(10, TimeUnit.SECONDS);
            out.println("client: MPA Reply Private Data \"" + new String(welcome, StandardCharsets.US_ASCII) + "\"");
            String echo = client.echo().get(10, TimeUnit.SECONDS);
            out.println("client: echo \"" + echo + "\"");
            ch.close().sync();
            server.close().sync();
            return echo;
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
