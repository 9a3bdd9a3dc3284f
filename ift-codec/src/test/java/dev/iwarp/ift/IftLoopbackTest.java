package dev.iwarp.ift;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * IFT over real TCP on 127.0.0.1 (NIO, and epoll where available), ephemeral ports: the roles follow
 * the connection (client = node A, accepted = node B), ULPDUs of both DDP header types at 0 and 1
 * octets of payload, MULPDU-1 and MULPDU octets and many random ones are echoed with each CRC
 * combination per direction, and the octets compared; a graceful close delivers every frame first.
 */
class IftLoopbackTest {
    private final List<EventLoopGroup> groups = new ArrayList<>();
    private final List<Channel> channels = new ArrayList<>();

    @AfterEach
    void shutdown() throws Exception {
        for (Channel c : channels) {
            c.close().sync();
        }
        for (EventLoopGroup g : groups) {
            g.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    private EventLoopGroup group(boolean epoll) {
        if (epoll) {
            Assumptions.assumeTrue(Epoll.isAvailable(), "native epoll not available here");
        }
        IoHandlerFactory f = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        EventLoopGroup g = new MultiThreadIoEventLoopGroup(1, f);
        groups.add(g);
        return g;
    }

    /**
     * The last ULPDU of an exchange, sent with the client's graceful close: untagged, its DDP header
     * area starting with these octets (random ULPDUs of the seeded source never do). The echo server
     * does not answer it, since the client is closing: an echo would race the close (a write into a
     * connection the peer already shut, seen as a reset instead of a clean end).
     */
    static final byte[] FINAL_MARKER = "\0IFT-final-ULPDU".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    static boolean isFinalMarker(ByteBuf ulpdu) {
        if (ulpdu.readableBytes() < FINAL_MARKER.length) {
            return false;
        }
        for (int i = 0; i < FINAL_MARKER.length; i++) {
            if (ulpdu.getByte(ulpdu.readerIndex() + i) != FINAL_MARKER[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Node B (by connection direction) that echoes every ULPDU but the final marker; reports what
     * reached it last.
     */
    private InetSocketAddress startEchoServer(boolean epoll, IftSettings settings, BlockingQueue<String> serverEnds)
            throws Exception {
        Class<? extends ServerChannel> type = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        Channel server = new ServerBootstrap().group(group(epoll)).channel(type)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new IftAdaptionHandler(settings), new ChannelInboundHandlerAdapter() {
                            int frames;

                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                frames++;
                                if (isFinalMarker((ByteBuf) msg)) {
                                    ((ByteBuf) msg).release(); // the client is closing: no answer
                                } else {
                                    ctx.writeAndFlush(msg); // the ULPDU back as a frame
                                }
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                serverEnds.add("exception " + cause);
                                ctx.close();
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                serverEnds.add("inactive after " + frames + " frames");
                            }
                        });
                    }
                }).bind("127.0.0.1", 0).sync().channel();
        channels.add(server);
        return (InetSocketAddress) server.localAddress();
    }

    private static final class Client {
        final Channel channel;
        final IftAdaptionHandler ift;
        final BlockingQueue<ByteBuf> received;

        Client(Channel channel, IftAdaptionHandler ift, BlockingQueue<ByteBuf> received) {
            this.channel = channel;
            this.ift = ift;
            this.received = received;
        }
    }

    private Client connect(boolean epoll, InetSocketAddress addr, IftSettings settings) throws Exception {
        IftAdaptionHandler ift = new IftAdaptionHandler(settings);
        BlockingQueue<ByteBuf> received = new LinkedBlockingQueue<>();
        Channel ch = new Bootstrap().group(group(epoll)).channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(ift, new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                received.add((ByteBuf) msg);
                            }
                        });
                    }
                }).connect(addr).sync().channel();
        channels.add(ch);
        return new Client(ch, ift, received);
    }

    static byte[] ulpdu(Random rnd, boolean tagged, int length) {
        byte[] u = new byte[length];
        rnd.nextBytes(u);
        u[0] = (byte) (tagged ? u[0] | 0x80 : u[0] & 0x7F); // the DDP T bit fixes the header length
        return u;
    }

    @ParameterizedTest(name = "epoll={0} client sends HC={1} PC={2}, server HC={3} PC={4}, server checks={5}")
    @CsvSource({
            "false, true,  true,  true,  true,  true",
            "false, false, false, true,  false, true",
            "false, true,  false, false, true,  true",
            "false, false, true,  false, false, false",
            "true,  true,  true,  true,  true,  true",
            "true,  false, false, false, true,  true",
            "true,  true,  false, true,  false, true",
            "true,  false, true,  true,  true,  false",
    })
    void echoOverRealTcp(boolean epoll, boolean cHc, boolean cPc, boolean sHc, boolean sPc, boolean sChecks)
            throws Exception {
        BlockingQueue<String> serverEnds = new LinkedBlockingQueue<>();
        IftSettings server = IftSettings.builder().sendCrcs(sHc, sPc).checkCrcs(sChecks, sChecks)
                .omitCrcsPeerIgnores(false).build();
        InetSocketAddress addr = startEchoServer(epoll, server, serverEnds);
        Client c = connect(epoll, addr, IftSettings.builder().sendCrcs(cHc, cPc).build());
        Future<IftParameters> f = c.ift.adaptionFuture().await();
        assertTrue(f.isSuccess(), () -> String.valueOf(f.cause()));
        IftParameters p = f.getNow();
        assertEquals(IftRole.NODE_A, p.role(), "the TCP client is node A by default");
        assertEquals(List.of(cHc, cPc, sHc, sPc, sHc, sPc),
                List.of(p.txHeaderCrc(), p.txPayloadCrc(), p.rxHeaderCrcPresent(), p.rxPayloadCrcPresent(),
                        p.rxHeaderCrcChecked(), p.rxPayloadCrcChecked()));
        assertEquals(cHc && sChecks, p.peerChecksHeaderCrc());
        assertEquals(cPc && sChecks, p.peerChecksPayloadCrc());
        int mulpdu = p.mulpdu();
        assertEquals(65535, mulpdu);

        Random rnd = new Random(5);
        List<byte[]> sent = new ArrayList<>();
        for (boolean tagged : new boolean[] {true, false}) {
            int header = tagged ? 14 : 18;
            for (int size : new int[] {header, header + 1, mulpdu - 1, mulpdu}) {
                sent.add(ulpdu(rnd, tagged, size));
            }
        }
        for (int i = 0; i < 300; i++) {
            boolean tagged = rnd.nextBoolean();
            sent.add(ulpdu(rnd, tagged, (tagged ? 14 : 18) + rnd.nextInt(i % 10 == 0 ? 20000 : 200)));
        }
        for (byte[] u : sent) {
            c.channel.write(Unpooled.wrappedBuffer(u));
        }
        c.channel.flush();
        for (int i = 0; i < sent.size(); i++) {
            ByteBuf got = c.received.poll(20, TimeUnit.SECONDS);
            assertNotNull(got, "echo " + i + " timed out");
            try {
                byte[] a = new byte[got.readableBytes()];
                got.getBytes(got.readerIndex(), a);
                assertArrayEquals(sent.get(i), a, "ULPDU " + i);
            } finally {
                got.release();
            }
        }

        // graceful close: the framer flushes, then FINs after the last complete frame
        IftFramer framer = c.channel.pipeline().get(IftFramer.class);
        byte[] last = ulpdu(rnd, false, 5000);
        System.arraycopy(FINAL_MARKER, 0, last, 0, FINAL_MARKER.length); // not echoed: the close is the last word
        CompletableFuture<Void> closed = new CompletableFuture<>();
        c.channel.closeFuture().addListener(x -> closed.complete(null));
        c.channel.eventLoop().execute(() -> {
            c.channel.write(Unpooled.wrappedBuffer(last));
            framer.closeAfterFlush();
        });
        closed.get(20, TimeUnit.SECONDS);
        assertEquals("inactive after " + (sent.size() + 1) + " frames", serverEnds.poll(20, TimeUnit.SECONDS),
                "the server got every frame and a clean end, no F6");
    }

    @ParameterizedTest(name = "epoll={0}")
    @ValueSource(booleans = {false, true})
    void nonIftPeerIsRefusedAtOnce(boolean epoll) throws Exception {
        BlockingQueue<String> serverEnds = new LinkedBlockingQueue<>();
        InetSocketAddress addr = startEchoServer(epoll, IftSettings.defaults(), serverEnds);
        Channel raw = new Bootstrap().group(group(epoll)).channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                .handler(new ChannelInboundHandlerAdapter()).connect(addr).sync().channel();
        channels.add(raw);
        raw.writeAndFlush(Unpooled.wrappedBuffer("GET / HTTP/1.1\r\n\r\n".getBytes()));
        assertTrue(raw.closeFuture().await(20, TimeUnit.SECONDS), "node B closed the connection (A1)");
        assertEquals("inactive after 0 frames", serverEnds.poll(20, TimeUnit.SECONDS));
    }
}
