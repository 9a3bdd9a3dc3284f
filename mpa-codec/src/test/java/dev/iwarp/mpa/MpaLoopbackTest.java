package dev.iwarp.mpa;

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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * MPA over real TCP on 127.0.0.1 (NIO, and epoll where available): startup, FPDUs echoed back with
 * CRC and markers as negotiated, MULPDU from the real EMSS on epoll, and the Rev 2 to Rev 1 fallback
 * against a Responder that only speaks RFC 5044.
 */
class MpaLoopbackTest {
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
        IoHandlerFactory f = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        EventLoopGroup g = new MultiThreadIoEventLoopGroup(1, f);
        groups.add(g);
        return g;
    }

    /** An echo Responder: accepts every Request with "ok" and echoes every ULPDU. */
    private InetSocketAddress startEchoResponder(boolean epoll, MpaSettings settings) throws Exception {
        Class<? extends ServerChannel> type = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        Channel server = new ServerBootstrap().group(group(epoll)).channel(type)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(MpaStartupHandler.responder(settings), new ChannelInboundHandlerAdapter() {
                            @Override
                            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                if (evt instanceof MpaConnectRequest) {
                                    ((MpaConnectRequest) evt).accept("ok".getBytes());
                                }
                            }

                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                ctx.writeAndFlush(msg); // ULPDU back as an FPDU
                            }
                        });
                    }
                }).bind("127.0.0.1", 0).sync().channel();
        channels.add(server);
        return (InetSocketAddress) server.localAddress();
    }

    private static final class Client {
        final Channel channel;
        final MpaStartupHandler mpa;
        final BlockingQueue<ByteBuf> received;
        /** Octets the client's socket read: a slow echo (a loaded machine) still moves them, a stalled one does not. */
        final AtomicLong octetsIn;

        Client(Channel channel, MpaStartupHandler mpa, BlockingQueue<ByteBuf> received, AtomicLong octetsIn) {
            this.channel = channel;
            this.mpa = mpa;
            this.received = received;
            this.octetsIn = octetsIn;
        }

        /**
         * The next echoed ULPDU, waited for as long as octets keep arriving; null once none arrived for
         * {@link #STALL_SECONDS} s (a stall). A fixed 10 s per echo failed at load 65 on 2 cores (epoll, CRC and
         * markers both ways: 64 KiB FPDUs cut every 512 octets, with paranoid leak tracking).
         */
        ByteBuf nextEcho() throws InterruptedException {
            long seen = -1;
            long movedAt = 0;
            for (;;) {
                ByteBuf got = received.poll(1, TimeUnit.SECONDS);
                long now = octetsIn.get();
                if (got != null) {
                    return got;
                } else if (now != seen) {
                    seen = now;
                    movedAt = System.nanoTime();
                } else if (System.nanoTime() - movedAt > TimeUnit.SECONDS.toNanos(STALL_SECONDS)) {
                    return null;
                }
            }
        }
    }

    /** Seconds without an octet arriving after which an echo is late: a stall, not slowness. */
    private static final int STALL_SECONDS = 60;

    private Client connect(boolean epoll, InetSocketAddress addr, MpaSettings settings) throws Exception {
        MpaStartupHandler mpa = MpaStartupHandler.initiator(settings);
        BlockingQueue<ByteBuf> received = new LinkedBlockingQueue<>();
        AtomicLong octetsIn = new AtomicLong();
        Channel ch = new Bootstrap().group(group(epoll)).channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                octetsIn.addAndGet(((ByteBuf) msg).readableBytes());
                                ctx.fireChannelRead(msg);
                            }
                        });
                        ch.pipeline().addLast(mpa, new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                received.add((ByteBuf) msg);
                            }
                        });
                    }
                }).connect(addr).sync().channel();
        channels.add(ch);
        return new Client(ch, mpa, received, octetsIn);
    }

    @ParameterizedTest(name = "epoll={0} crc={1} markers initiator={2} responder={3}")
    @CsvSource({
            "false, true,  false, false",
            "false, false, false, false",
            "false, true,  true,  false",
            "false, true,  false, true",
            "false, true,  true,  true",
            "true,  true,  false, false",
            "true,  true,  true,  true",
            "true,  false, true,  false",
    })
    void echoOverRealTcp(boolean epoll, boolean crc, boolean markersI, boolean markersR) throws Exception {
        if (epoll) {
            Assumptions.assumeTrue(Epoll.isAvailable(), "native epoll not available here");
        }
        InetSocketAddress addr = startEchoResponder(epoll, MpaSettings.builder().crc(false).markers(markersR).acceptMarkers(true).build());
        Client c = connect(epoll, addr, MpaSettings.builder().crc(crc).markers(markersI).build());
        Future<MpaParameters> f = c.mpa.startupFuture().await();
        assertTrue(f.isSuccess(), () -> String.valueOf(f.cause()));
        MpaParameters p = f.getNow();
        assertEquals(crc, p.crc());
        assertEquals(markersR, p.markersTx());
        assertEquals(markersI, p.markersRx());
        assertArrayEquals("ok".getBytes(), p.peerPrivateData());
        // epoll: TCP_MAXSEG; NIO: loopback's MTU less headers and timestamps (RFC 5044 §4.5 EMSS)
        int emss = epoll ? (int) ((EpollSocketChannel) c.channel).tcpInfo().sndMss()
                : Emss.fromInterfaceMtu(c.channel.localAddress());
        assertTrue(emss > 1460, "loopback MSS " + emss);
        assertEquals(MpaFramer.mulpdu(emss, markersR), p.mulpdu());

        Random rnd = new Random(7);
        int[] sizes = {18, 0, 1, 100, 511, 512, 1454, 4096, 20000, 64767, 64768};
        List<byte[]> sent = new ArrayList<>();
        for (int round = 0; round < 3; round++) {
            for (int s : sizes) {
                byte[] a = new byte[s];
                rnd.nextBytes(a);
                sent.add(a);
                c.channel.write(Unpooled.wrappedBuffer(a));
            }
        }
        c.channel.flush();
        for (byte[] expected : sent) {
            ByteBuf got = c.nextEcho();
            assertNotNull(got, "echo timed out");
            try {
                byte[] a = new byte[got.readableBytes()];
                got.getBytes(got.readerIndex(), a);
                assertArrayEquals(expected, a);
            } finally {
                got.release();
            }
        }
    }

    /**
     * RFC 5044 §4.5: MULPDU derives from the current EMSS. Linux starts a loopback connection's MSS at
     * half the peer's first window (32768) and raises it as the window grows; the framer follows.
     */
    @Test
    void mulpduFollowsTheEmssOnEpoll() throws Exception {
        Assumptions.assumeTrue(Epoll.isAvailable(), "native epoll not available here");
        InetSocketAddress addr = startEchoResponder(true, MpaSettings.builder().crc(false).build());
        Client c = connect(true, addr, MpaSettings.builder().crc(true).build());
        MpaParameters p = c.mpa.startupFuture().await().getNow();
        assertNotNull(p);
        MpaFramer framer = c.channel.pipeline().get(MpaFramer.class);
        int atStartup = p.mulpdu();
        byte[] a = new byte[60000];
        for (int i = 0; i < 64; i++) { // 3.8 MB each way lets the window, and with it the MSS, grow
            c.channel.writeAndFlush(Unpooled.wrappedBuffer(a));
        }
        for (int i = 0; i < 64; i++) {
            ByteBuf got = c.nextEcho();
            assertNotNull(got, "echo timed out");
            got.release();
        }
        // the framer reads the EMSS again after its interval (longer while the readings found it unchanged)
        long end = System.nanoTime() + 2 * FpduWriter.EMSS_CHECK_MAX_NANOS + TimeUnit.SECONDS.toNanos(10);
        int[] now;
        do {
            Thread.sleep(5);
            now = c.channel.eventLoop().submit(() -> {
                int m = 0;
                for (int i = 0; i <= FpduWriter.EMSS_CHECK_INTERVAL; i++) {
                    m = framer.mulpdu();
                }
                return new int[] {m, (int) ((EpollSocketChannel) c.channel).tcpInfo().sndMss()};
            }).get(10, TimeUnit.SECONDS);
        } while (now[0] != MpaFramer.mulpdu(now[1], false) && System.nanoTime() < end);
        assertEquals(MpaFramer.mulpdu(now[1], false), now[0], "MULPDU for snd_mss " + now[1]);
        // this kernel raised the MSS: the MULPDU moved with it (32762 -> 64768 on Linux 6.x loopback)
        Assumptions.assumeTrue(now[0] != atStartup, "the MSS did not change here: " + now[1]);
        assertTrue(now[0] > atStartup, atStartup + " -> " + now[0]);
    }

    /**
     * A settled connection's EMSS is read rarely (each reading a getsockopt): every reading that finds the MULPDU
     * unchanged doubles the interval to the next, up to {@link FpduWriter#EMSS_CHECK_MAX_NANOS}. Counted as TCP_INFO
     * readings during 300 ms of MULPDU queries on the event loop (one per 5 ms before: 60).
     */
    @Test
    void aSettledEmssIsReadRarely() throws Exception {
        Assumptions.assumeTrue(Epoll.isAvailable(), "native epoll not available here");
        InetSocketAddress addr = startEchoResponder(true, MpaSettings.builder().crc(false).build());
        Client c = connect(true, addr, MpaSettings.builder().crc(true).build());
        assertNotNull(c.mpa.startupFuture().await().getNow());
        MpaFramer framer = c.channel.pipeline().get(MpaFramer.class);
        long[] r = c.channel.eventLoop().submit(() -> {
            long reads = Emss.tcpInfoReads();
            long start = System.nanoTime();
            long calls = 0;
            while (System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(300)) {
                framer.mulpdu();
                calls++;
            }
            return new long[] {Emss.tcpInfoReads() - reads, System.nanoTime() - start, calls};
        }).get(30, TimeUnit.SECONDS);
        long reads = r[0];
        long elapsed = r[1];
        // doubling from 5 ms: log2(1 + elapsed / 5 ms) readings, one a second once at the cap, and two for a change
        long bound = 2 + (64 - Long.numberOfLeadingZeros(1 + elapsed / FpduWriter.EMSS_CHECK_NANOS))
                + elapsed / FpduWriter.EMSS_CHECK_MAX_NANOS;
        assertTrue(reads <= bound, reads + " TCP_INFO readings for " + r[2] + " MULPDU queries in "
                + TimeUnit.NANOSECONDS.toMillis(elapsed) + " ms; at most " + bound);
    }

    @Test
    void rev2InitiatorFallsBackToRev1AgainstAnRfc5044OnlyResponder() throws Exception {
        // An RFC 5044-only Responder closes on a Rev 2 Request (mpa-rev2 §5)
        InetSocketAddress addr = startEchoResponder(false, MpaSettings.builder().revision(1).build());
        MpaSettings settings = MpaSettings.builder().rev1Fallback(true).build();
        Client first = connect(false, addr, settings);
        Future<MpaParameters> f1 = first.mpa.startupFuture().await();
        assertInstanceOf(MpaRevisionRefusedException.class, f1.cause());

        Client second = connect(false, addr, settings.toBuilder().revision(1).build());
        Future<MpaParameters> f2 = second.mpa.startupFuture().await();
        assertTrue(f2.isSuccess(), () -> String.valueOf(f2.cause()));
        assertEquals(1, f2.getNow().revision());
        second.channel.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {0x41, 0x43, 1, 2}));
        ByteBuf echo = second.nextEcho();
        assertNotNull(echo);
        assertEquals(4, echo.readableBytes());
        echo.release();
    }
}
