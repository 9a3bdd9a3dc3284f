package dev.iwarp.benchmarks.compare;

import dev.iwarp.benchmarks.compare.process.RawRead;
import dev.iwarp.bootstrap.Transport;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import dev.iwarp.bootstrap.IwarpStack;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The raw Netty baselines, same loops and transport as {@link OursRun}:
 * <ul>
 *   <li>WRITE (and READ with {@link RawRead.Mode#STREAM}): bulk writes of one pooled direct buffer of
 *       {@code size} octets (a retained duplicate each time: no copy) to a sink that releases what it reads,
 *       while the channel is writable (high water mark = depth x size, the octets our stack may have
 *       outstanding); a message counts when its last octet reaches the sink.</li>
 *   <li>READ ({@link RawRead.Mode#REQUEST_RESPONSE}, the default): the client sends 28-octet requests, at most
 *       depth (the case's ORD) outstanding, and the server answers each with {@code size} octets of one pooled
 *       direct buffer ({@link RawRead}); a message counts when its response's last octet reaches the client.</li>
 *   <li>PINGPONG: 4-octet length-prefixed frames echoed, {@code writeAndFlush} each.</li>
 *   <li>PIPELINE: length-prefixed frames with the same credit scheme as ours; ordinary flush
 *       coalescing (one flush per batch written, one per read batch).</li>
 * </ul>
 * TLS cases put Netty's {@link io.netty.handler.ssl.SslHandler} from {@link RawTls} first on both sides.
 */
@SuppressWarnings("try") // close() waits for the event loops to stop, so it may be interrupted
final class RawRun extends CompareRun {
    private EventLoopGroup serverGroup;
    private EventLoopGroup clientGroup;
    private Channel listener;
    private Channel client;
    private Channel server;
    private ByteBuf message;
    private ByteBuf reply;
    private volatile long sinkOctets;
    private long sentAt;
    private long sent;
    private long credited;
    private final RawRead.Mode rawRead;
    private RawRead.Requester requester;

    RawRun(CompareCase c) {
        this(c, RawRead.Mode.REQUEST_RESPONSE);
    }

    RawRun(CompareCase c, RawRead.Mode rawRead) {
        super(c);
        this.rawRead = rawRead;
    }

    @Override
    long messages() {
        if (requestResponse()) {
            return requester.completed();
        }
        return c.op() == CompareCase.Op.WRITE || c.op() == CompareCase.Op.READ ? sinkOctets / c.size() : messages;
    }

    /** A Read case on the request/response baseline. */
    private boolean requestResponse() {
        return c.op() == CompareCase.Op.READ && rawRead == RawRead.Mode.REQUEST_RESPONSE;
    }

    private boolean framed() {
        return c.op() == CompareCase.Op.PINGPONG || c.op() == CompareCase.Op.PIPELINE;
    }

    @Override
    void open() throws Exception {
        Transport t = c.transport();
        serverGroup = new MultiThreadIoEventLoopGroup(1, t.ioHandlerFactory());
        clientGroup = new MultiThreadIoEventLoopGroup(1, t.ioHandlerFactory());
        Class<? extends ServerChannel> serverClass = t.serverChannel();
        Class<? extends SocketChannel> clientClass = t.socketChannel();
        int prefix = framed() ? 4 : 0;
        message = PooledByteBufAllocator.DEFAULT.directBuffer(prefix + c.size());
        reply = PooledByteBufAllocator.DEFAULT.directBuffer(prefix + c.size());
        if (framed()) {
            message.writeInt(c.size());
            reply.writeInt(c.size());
        }
        message.writeZero(c.size());
        reply.writeZero(c.size());

        CompletableFuture<Channel> accepted = new CompletableFuture<>();
        listener = new ServerBootstrap().group(serverGroup).channel(serverClass)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (c.tls()) {
                            ch.pipeline().addLast(RawTls.server(ch.alloc()));
                        }
                        if (framed()) {
                            ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(1 << 24, 0, 4, 0, 4));
                        }
                        if (requestResponse()) {
                            ch.pipeline().addLast(new RawRead.Responder(reply.retain()), new Failures());
                        } else {
                            ch.pipeline().addLast(new ServerHandler());
                        }
                        accepted.complete(ch);
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        client = new Bootstrap().group(clientGroup).channel(clientClass)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark(c))
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (c.tls()) {
                            ch.pipeline().addLast(RawTls.client(ch.alloc()));
                        }
                        if (framed()) {
                            ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(1 << 24, 0, 4, 0, 4));
                        }
                        if (requestResponse()) {
                            requester = new RawRead.Requester(c.size(), c.depth(), () -> stopped);
                            ch.pipeline().addLast(requester, new Failures());
                        } else {
                            ch.pipeline().addLast(new ClientHandler());
                        }
                    }
                }).connect(listener.localAddress()).sync().channel();
        if (c.tls()) { // traffic starts after the handshake, as ours does
            client.pipeline().get(io.netty.handler.ssl.SslHandler.class).handshakeFuture().sync();
        }
        clientLoop = client.eventLoop();
        server = accepted.get(10, TimeUnit.SECONDS);
        serverLoop = server.eventLoop();
    }

    /** The two ends once open (for tests of which program runs). */
    Channel client() {
        return client;
    }

    Channel server() {
        return server;
    }

    @Override
    void start() {
        clientLoop.execute(() -> {
            if (requestResponse()) {
                requester.start();
            } else if (c.op() == CompareCase.Op.PINGPONG) {
                sentAt = System.nanoTime();
                client.writeAndFlush(message.retainedDuplicate());
            } else {
                pump();
                client.flush();
            }
        });
    }

    /** Bulk: write while writable. Pipeline: write while the window allows. The caller flushes. */
    private void pump() {
        if (c.op() == CompareCase.Op.PIPELINE) {
            while (!stopped && sent - credited < c.depth()) {
                sent++;
                client.write(message.retainedDuplicate(), client.voidPromise());
            }
        } else {
            while (!stopped && client.isWritable()) {
                client.write(message.retainedDuplicate(), client.voidPromise());
            }
        }
    }

    private final class ClientHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ((ByteBuf) msg).release();
            if (c.op() == CompareCase.Op.PINGPONG) {
                long now = System.nanoTime();
                rtt.recordValue(Math.min(now - sentAt, rtt.getHighestTrackableValue()));
                messages++;
                if (!stopped) {
                    sentAt = System.nanoTime();
                    ctx.writeAndFlush(message.retainedDuplicate(), ctx.voidPromise());
                }
            } else {
                credited += c.creditEvery();
                pump();
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (c.op() == CompareCase.Op.PIPELINE) {
                ctx.flush();
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (c.op() != CompareCase.Op.PIPELINE && ctx.channel().isWritable()) {
                pump();
                ctx.flush();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            fail(cause);
            ctx.close();
        }
    }

    /** After the request/response handlers: what fails ends the run. */
    private final class Failures extends ChannelInboundHandlerAdapter {
        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            fail(cause);
            ctx.close();
        }
    }

    private final class ServerHandler extends ChannelInboundHandlerAdapter {
        private int sinceCredit;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf buf = (ByteBuf) msg;
            switch (c.op()) {
                case PINGPONG -> ctx.writeAndFlush(reply.retainedDuplicate(), ctx.voidPromise());
                case PIPELINE -> {
                    messages++;
                    if (++sinceCredit == c.creditEvery()) {
                        sinceCredit = 0;
                        ctx.write(reply.retainedDuplicate(), ctx.voidPromise());
                    }
                }
                default -> sinkOctets += buf.readableBytes();
            }
            buf.release();
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (c.op() == CompareCase.Op.PIPELINE) {
                ctx.flush();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            fail(cause);
            ctx.close();
        }
    }

    @Override
    public void close() throws Exception {
        stopped = true;
        try {
            if (client != null) {
                client.close().sync();
            }
            if (server != null) {
                // the server's handlers release what they hold (the Read responder its reference to the reply) when
                // they are removed, which the close's deregistration does in a later task of the loop, after it marks
                // the channel unregistered: once it is, a task queued now runs after that one, before the loops shut
                // down (a loop that ended first once left the reply unreleased, which the leak detector reported)
                server.close().sync();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (server.isRegistered() && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                server.eventLoop().submit(() -> { }).sync();
            }
            if (listener != null) {
                listener.close().sync();
            }
        } finally {
            clientGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
            serverGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
            message.release();
            reply.release();
        }
    }

    /**
     * The raw writer's water marks: a high mark of depth x size (what our stack may have outstanding), at
     * least 1 MiB (with 256 KiB this writer ran at about half the rate on loopback); the low mark half
     * of it. (Our stack runs on its defaults, {@link IwarpStack#DEFAULT_WRITE_BUFFER_WATER_MARK}.)
     */
    static WriteBufferWaterMark waterMark(CompareCase c) {
        int high = Math.max(1024 * 1024, c.depth() * c.size());
        return new WriteBufferWaterMark(high / 2, high);
    }
}
