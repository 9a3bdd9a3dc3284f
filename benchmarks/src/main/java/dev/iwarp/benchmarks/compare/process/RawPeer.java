package dev.iwarp.benchmarks.compare.process;

import dev.iwarp.bootstrap.Transport;
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
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.ResourceLeakDetector;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;

/**
 * The raw Netty server process of {@code compare --processes}: as small as it can be, as many event loops as
 * {@code serve} has (Netty's default, twice the cores; each connection on one of them, as serve puts each of its
 * connections on one), TCP_NODELAY, the transport asked for. A connection's first 9 octets
 * say what it is ({@link RawClient} sends them): mode, message size, depth (big-endian ints).
 * <ul>
 *   <li>{@code S} sink: reads and releases; counts the octets (what the raw Write case measures);</li>
 *   <li>{@code W} source: writes a pooled direct buffer of the size (a retained duplicate, no copy) while the
 *       channel is writable, high water mark depth x size and at least 1 MiB (the raw Read case, {@code --raw-read
 *       stream});</li>
 *   <li>{@code R} responder: answers each 28-octet request with the octets it names, at most the size, from one
 *       pooled direct buffer (retained duplicates, no copy), one flush per read batch (the raw Read case,
 *       {@code --raw-read request-response}, {@link RawRead});</li>
 *   <li>{@code E} echo: 4-octet length-prefixed frames, each written back, one flush per read batch;</li>
 *   <li>{@code C} cost: answers one text line "CPU-nanoseconds allocated-octets sunk-octets" and closes.</li>
 * </ul>
 * Usage: {@code RawPeer --transport epoll|nio|io_uring [--port N]}; prints {@code listening PORT} once bound.
 */
public final class RawPeer {
    static final int HEADER = 9;
    private static final LongAdder SUNK = new LongAdder(); // octets read by sinks (every loop), for the cost line

    private RawPeer() {
    }

    public static void main(String[] args) throws Exception {
        Transport transport = Transport.auto();
        int port = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--transport" -> transport = Transport.parse(args[++i]);
                case "--port" -> port = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        transport.checkAvailable();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        ((com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean())
                .setThreadAllocatedMemoryEnabled(true);
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(0, transport.ioHandlerFactory()); // 0: as serve
        Channel listener = new ServerBootstrap().group(group).channel(transport.serverChannel())
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new Mode());
                    }
                }).bind(new InetSocketAddress("127.0.0.1", port)).sync().channel();
        System.out.println("listening " + ((InetSocketAddress) listener.localAddress()).getPort());
        System.out.flush();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> group.shutdownGracefully().syncUninterruptibly()));
        listener.closeFuture().sync();
    }

    /** Reads the 9-octet header, then puts the mode's handler in its place. */
    private static final class Mode extends ChannelInboundHandlerAdapter {
        private final ByteBuf header = PooledByteBufAllocator.DEFAULT.heapBuffer(HEADER);

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            in.readBytes(header, Math.min(in.readableBytes(), header.writableBytes()));
            if (header.isWritable()) {
                in.release();
                return;
            }
            char mode = (char) header.getByte(0);
            int size = header.getInt(1);
            int depth = header.getInt(5);
            header.release();
            switch (mode) {
                case 'S' -> ctx.pipeline().replace(this, "sink", new Sink());
                case 'E' -> {
                    ctx.pipeline().addAfter(ctx.name(), "frames", new LengthFieldBasedFrameDecoder(1 << 24, 0, 4, 0, 0));
                    ctx.pipeline().replace(this, "echo", new Echo());
                }
                case 'R' -> ctx.pipeline().replace(this, "responder", new RawRead.Responder(
                        PooledByteBufAllocator.DEFAULT.directBuffer(size).writeZero(size)));
                case 'W' -> {
                    ctx.pipeline().replace(this, "source", new Source(size, depth));
                    in.release();
                    return;
                }
                case 'C' -> {
                    ProcessCost c = ProcessCost.now();
                    ctx.writeAndFlush(ctx.alloc().buffer().writeBytes(String.format(Locale.ROOT, "%d %d %d%n",
                            c.cpuNanos(), c.allocatedBytes(), SUNK.sum()).getBytes(StandardCharsets.US_ASCII)))
                            .addListener(f -> ctx.close());
                    in.release();
                    return;
                }
                default -> {
                    in.release();
                    ctx.close();
                    return;
                }
            }
            if (in.isReadable()) {
                ctx.pipeline().fireChannelRead(in); // what followed the header, to the mode's handler
            } else {
                in.release();
            }
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            if (header.refCnt() > 0) {
                header.release();
            }
        }
    }

    private static final class Sink extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            SUNK.add(b.readableBytes());
            b.release();
        }
    }

    private static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg, ctx.voidPromise()); // the frame as read, prefix included
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }
    }

    private static final class Source extends ChannelInboundHandlerAdapter {
        private final ByteBuf message;
        private final int high;

        Source(int size, int depth) {
            message = PooledByteBufAllocator.DEFAULT.directBuffer(size).writeZero(size);
            high = (int) Math.min(Integer.MAX_VALUE / 2, Math.max(1 << 20, (long) depth * size));
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            ctx.channel().config().setWriteBufferWaterMark(new io.netty.channel.WriteBufferWaterMark(high / 2, high));
            pump(ctx);
        }

        private void pump(ChannelHandlerContext ctx) {
            while (ctx.channel().isActive() && ctx.channel().isWritable()) {
                ctx.write(message.retainedDuplicate(), ctx.voidPromise());
            }
            ctx.flush();
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                pump(ctx);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ((ByteBuf) msg).release();
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            message.release();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            ctx.fireChannelInactive();
        }
    }
}
