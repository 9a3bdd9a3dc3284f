package dev.iwarp.server;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.ReadTimeoutHandler;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * {@code GET /metrics} in the Prometheus text format over Netty's HTTP codec, on its own single event loop
 * thread (a scrape never waits behind RDMA traffic, nor slows it). Anything else: 404 or 405. Requests are
 * small and bounded (8 KiB, 10 s), one response per connection.
 */
final class MetricsHttpServer implements AutoCloseable {
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final EventLoopGroup group;
    private final Channel channel;

    private MetricsHttpServer(EventLoopGroup group, Channel channel) {
        this.group = group;
        this.channel = channel;
    }

    static MetricsHttpServer start(InetSocketAddress local, Supplier<String> scrape) throws InterruptedException {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            Channel ch = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel c) {
                            c.pipeline().addLast(new ReadTimeoutHandler(10), new HttpServerCodec(4096, 8192, 8192),
                                    new HttpObjectAggregator(8192), new Scrape(scrape));
                        }
                    }).bind(local).sync().channel();
            return new MetricsHttpServer(group, ch);
        } catch (RuntimeException | InterruptedException e) {
            group.shutdownGracefully();
            throw e;
        }
    }

    InetSocketAddress localAddress() {
        return (InetSocketAddress) channel.localAddress();
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly(); // no quiet period: 
        // a scrape in flight is cut short, nothing else waits on this loop
    }

    private static final class Scrape extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final Supplier<String> scrape;

        Scrape(Supplier<String> scrape) {
            this.scrape = scrape;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
            String path = new QueryStringDecoder(req.uri()).path();
            FullHttpResponse res;
            if (!path.equals("/metrics")) {
                res = text(HttpResponseStatus.NOT_FOUND, "only /metrics here\n", "text/plain; charset=utf-8");
            } else if (!req.method().equals(HttpMethod.GET)) {
                res = text(HttpResponseStatus.METHOD_NOT_ALLOWED, "GET /metrics\n", "text/plain; charset=utf-8");
            } else {
                res = text(HttpResponseStatus.OK, scrape.get(), CONTENT_TYPE);
            }
            res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
        }

        private static FullHttpResponse text(HttpResponseStatus status, String body, String type) {
            ByteBuf content = Unpooled.copiedBuffer(body, StandardCharsets.UTF_8);
            FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
            res.headers().set(HttpHeaderNames.CONTENT_TYPE, type);
            res.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
            return res;
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // a malformed or slow request: drop it, serve goes on
        }
    }
}
