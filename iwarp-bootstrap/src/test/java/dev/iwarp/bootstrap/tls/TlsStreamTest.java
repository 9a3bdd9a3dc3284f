package dev.iwarp.bootstrap.tls;

import dev.iwarp.bootstrap.ListenOptions;
import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpConnectionRequest;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.bootstrap.Transport;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.mpa.MpaStartupCompletionEvent;
import dev.iwarp.mpa.MpaStartupHandler;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.QueuePair;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import ch.qos.logback.classic.Level;
import dev.iwarp.testkit.LogCapture;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The stream inside TLS: what the wire carries, a clean close, and a peer that misbehaves after the
 * handshake (a truncating FIN without close_notify in the middle of an FPDU, a garbage record). The
 * misbehaving peer is a hand-built pipeline: SslHandler, then MPA, with a handler in between through
 * which raw octets enter the TLS stream.
 */
class TlsStreamTest {
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<IwarpConnectionRequest> offered = new CopyOnWriteArrayList<>();
    private final List<QueuePair> accepted = new CopyOnWriteArrayList<>();
    private final LogCapture log = LogCapture.of(TlsLayer.class.getName());

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        log.close();
    }

    private IwarpStack stack(java.util.function.Consumer<Channel> hook) {
        IwarpStack s = IwarpStack.builder().transport(Transport.NIO).threads(1).channelHook(hook).build();
        closeables.add(s);
        return s;
    }

    private Channel listen(IwarpStack server, TlsSettings tls) throws InterruptedException {
        Channel l = server.listen(new InetSocketAddress("127.0.0.1", 0), ListenOptions.mpa(MpaSettings.defaults()).tls(tls),
                req -> {
                    offered.add(req);
                    accepted.add(req.accept(server.allocPd(), new CompletionQueue(), new CompletionQueue(), new byte[0]));
                });
        closeables.add(() -> l.close().sync());
        return l;
    }

    @Test
    void theWireCarriesTlsRecordsOnlyAndACleanCloseIsNoTruncation() throws Exception {
        CompletableFuture<byte[]> firstOctets = new CompletableFuture<>();
        IwarpStack server = stack(ch -> ch.pipeline().addFirst(new ChannelInboundHandlerAdapter() {
            private final java.io.ByteArrayOutputStream seen = new java.io.ByteArrayOutputStream();

            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ByteBuf b = (ByteBuf) msg;
                if (seen.size() < 4096) {
                    seen.writeBytes(ByteBufUtil.getBytes(b));
                } else {
                    firstOctets.complete(seen.toByteArray());
                }
                ctx.fireChannelRead(msg);
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                firstOctets.complete(seen.toByteArray());
                ctx.fireChannelInactive();
            }
        }));
        Channel l = listen(server, TlsFixtures.server(TlsFixtures.SERVER));
        IwarpStack client = stack(ch -> { });
        QueuePair qp = client.connect(l.localAddress(), ConnectOptions.of(client.allocPd()).tls(TlsFixtures.client()))
                .get(10, TimeUnit.SECONDS);
        qp.close().await(5, TimeUnit.SECONDS);
        byte[] wire = firstOctets.get(10, TimeUnit.SECONDS);
        assertEquals(0x16, wire[0], "the first record is a TLS handshake record");
        assertFalse(new String(wire, StandardCharsets.ISO_8859_1).contains("MPA ID"), "an MPA key in clear on the wire");
        offered.get(0).channel().closeFuture().await(5, TimeUnit.SECONDS);
        Thread.sleep(200);
        assertEquals(0, log.count(Level.WARN, ""), () -> "warnings: " + log.lines(Level.WARN, line -> true));
    }

    @Test
    void aPinAloneAcceptsTheSelfSignedCertificateItNames() throws Exception {
        TlsCertificates.CertifiedKey self = TlsCertificates.selfSigned("iwarp-server", Duration.ofDays(1));
        Channel l = listen(stack(ch -> { }), TlsSettings.builder().identity(self).build());
        IwarpStack client = stack(ch -> { });
        QueuePair qp = client.connect(l.localAddress(),
                ConnectOptions.of(client.allocPd()).tls(TlsSettings.builder().pin(self.fingerprint()).build()))
                .get(10, TimeUnit.SECONDS);
        qp.close().await(5, TimeUnit.SECONDS);
    }

    /** A raw TLS client: [tls] [raw] [MPA Initiator]; returns once MPA's startup completed. */
    private Channel rawClient(Channel listener) throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        closeables.add(() -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync());
        CompletableFuture<Void> started = new CompletableFuture<>();
        TlsSettings tls = TlsFixtures.client();
        Channel ch = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) throws Exception {
                        c.pipeline().addLast("tls",
                                TlsContexts.clientHandler(tls.engines(), c.alloc(), tls, listener.localAddress()));
                        c.pipeline().addLast("raw", new ChannelInboundHandlerAdapter());
                        c.pipeline().addLast(MpaStartupHandler.initiator(MpaSettings.defaults()));
                        c.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                if (evt instanceof MpaStartupCompletionEvent) {
                                    started.complete(null);
                                }
                            }

                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                io.netty.util.ReferenceCountUtil.release(msg);
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                ctx.close(); // the server's alert, expected here
                            }
                        });
                    }
                }).connect(listener.localAddress()).sync().channel();
        started.get(10, TimeUnit.SECONDS);
        return ch;
    }

    @Test
    void finWithoutCloseNotifyInTheMiddleOfAnFpdu() throws Exception {
        Channel l = listen(stack(ch -> { }), TlsFixtures.server(TlsFixtures.SERVER));
        Channel raw = rawClient(l);
        // half an FPDU inside TLS: ULPDU_Length 100, then 50 octets of it
        ByteBuf half = Unpooled.buffer(52).writeShort(100).writeZero(50);
        raw.pipeline().context("raw").writeAndFlush(half).sync();
        ((SocketChannel) raw).shutdownOutput().sync(); // TCP FIN, no close_notify
        assertTrue(offered.get(0).channel().closeFuture().await(5, TimeUnit.SECONDS), "server kept the connection");
        log.await(Level.WARN, "closed TCP without a TLS close_notify");
        assertEquals(TlsException.Kind.TRUNCATED, TlsLayer.failure(offered.get(0).channel()).kind());
        assertEquals(1, log.count(Level.WARN, ""), () -> "one line: " + log.lines(Level.WARN, line -> true));
    }

    /**
     * On Bouncy Castle's JSSE: over Netty's OpenSSL binding the server closes too, but its SslHandler closes the
     * channel before the record's error reaches the lifecycle handler, which then reports a truncation.
     */
    @Test
    void aGarbageRecordAfterTheHandshake() throws Exception {
        Channel l = listen(stack(ch -> { }), TlsFixtures.server(TlsFixtures.SERVER).toBuilder()
                .provider(TlsProvider.BCJSSE).build());
        Channel raw = rawClient(l);
        // an application_data record whose 32 octets no key produced, below our TLS handler
        ByteBuf garbage = Unpooled.buffer().writeByte(0x17).writeShort(0x0303).writeShort(32);
        for (int i = 0; i < 32; i++) {
            garbage.writeByte(i * 37);
        }
        raw.pipeline().firstContext().writeAndFlush(garbage).sync();
        assertTrue(offered.get(0).channel().closeFuture().await(5, TimeUnit.SECONDS), "server kept the connection");
        assertTrue(raw.closeFuture().await(5, TimeUnit.SECONDS), "client not closed");
        log.await(Level.WARN, "we sent TLS alert bad_record_mac");
        assertEquals(TlsException.Kind.BAD_RECORD, TlsLayer.failure(offered.get(0).channel()).kind());
    }
}
