package dev.iwarp.bootstrap;

import dev.iwarp.sctp.SctpSettings;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaDevice;
import dev.iwarp.verbs.RdmaEngine;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.local.LocalServerChannel;
import io.netty.util.ReferenceCountUtil;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Two iWARP endpoints over an in-memory SCTP: {@link LocalChannel}s carrying {@code SctpMessage}s
 * (what NioSctpChannel delivers: one user message each, boundaries kept), the indication static on
 * both sides. With {@code unordered}, each side's arrivals are shuffled within every read batch, as
 * unordered SCTP delivery may do, so the AWS resequencing does real work.
 */
final class SctpPair implements AutoCloseable {
    final RdmaDevice serverDevice = new RdmaDevice();
    final RdmaDevice clientDevice = new RdmaDevice();
    final ProtectionDomain spd = serverDevice.allocPd();
    final ProtectionDomain cpd = clientDevice.allocPd();
    final CompletionQueue serverSend = new CompletionQueue();
    final CompletionQueue serverRecv = new CompletionQueue();
    final CompletionQueue clientSend = new CompletionQueue();
    final CompletionQueue clientRecv = new CompletionQueue();
    final EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, LocalIoHandler.newFactory());
    final Channel listener;
    final Channel clientChannel;
    final Channel serverChannel;
    final QueuePair client;
    final QueuePair server;

    SctpPair(boolean unordered) throws Exception {
        this(SctpSettings.builder().staticPeer(dev.iwarp.sctp.SctpIndication.RDMA_AND_NEGOTIATION).build(), unordered);
    }

    SctpPair(SctpSettings settings, boolean unordered) throws Exception {
        SctpFraming framing = SctpFraming.of(settings);
        LocalAddress address = new LocalAddress("sctp-pair-" + System.nanoTime());
        CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
        CompletableFuture<Channel> accepting = new CompletableFuture<>();
        listener = new ServerBootstrap().group(group).channel(LocalServerChannel.class)
                .childHandler(new ChannelInitializer<LocalChannel>() {
                    @Override
                    protected void initChannel(LocalChannel ch) {
                        if (unordered) {
                            ch.pipeline().addLast(new Shuffler());
                        }
                        IwarpPipeline.addResponder(ch.pipeline(), framing, req -> {
                            accepting.complete(req.channel());
                            accepted.complete(req.accept(spd, serverSend, serverRecv, new byte[0]));
                        });
                    }
                }).bind(address).sync().channel();
        RdmaEngine engine = new RdmaEngine(cpd, clientSend, clientRecv);
        clientChannel = new Bootstrap().group(group).channel(LocalChannel.class)
                .handler(new ChannelInitializer<LocalChannel>() {
                    @Override
                    protected void initChannel(LocalChannel ch) {
                        if (unordered) {
                            ch.pipeline().addLast(new Shuffler());
                        }
                        IwarpPipeline.addInitiator(ch.pipeline(), framing);
                        ch.pipeline().addLast(IwarpPipeline.RDMAP, engine);
                    }
                }).connect(address).sync().channel();
        client = engine.queuePair();
        client.established().get(10, TimeUnit.SECONDS);
        server = accepted.get(10, TimeUnit.SECONDS);
        serverChannel = accepting.get();
        server.established().get(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws Exception {
        clientChannel.close().await(5, TimeUnit.SECONDS);
        listener.close().await(5, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        serverDevice.close();
        clientDevice.close();
    }

    /**
     * Holds what reaches the server from now on until {@link Gate#open}: lets a test put several messages on
     * the wire before the server acts on the first (added at the head of the server's pipeline).
     */
    Gate holdServerInput() throws Exception {
        Gate gate = new Gate();
        serverChannel.eventLoop().submit(() -> serverChannel.pipeline().addFirst(gate)).get(5, TimeUnit.SECONDS);
        return gate;
    }

    /** See {@link #holdServerInput}. Messages still held when the channel closes are released. */
    static final class Gate extends ChannelInboundHandlerAdapter {
        private final List<Object> held = new ArrayList<>();
        private volatile int count;
        private ChannelHandlerContext ctx;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            held.add(msg);
            count = held.size();
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            // nothing was passed on
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            held.forEach(ReferenceCountUtil::release);
            held.clear();
            ctx.fireChannelInactive();
        }

        /** Waits until {@code n} messages are held. */
        void awaitHeld(int n) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (count < n) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the server got " + count + " of " + n + " messages in 10 s");
                }
                Thread.sleep(5);
            }
        }

        /** Passes on what was held, as one read batch, and everything after it. */
        void open() throws Exception {
            ctx.executor().submit(() -> {
                List<Object> out = new ArrayList<>(held);
                held.clear();
                ctx.pipeline().remove(this);
                out.forEach(ctx::fireChannelRead);
                ctx.fireChannelReadComplete();
            }).get(5, TimeUnit.SECONDS);
        }
    }

    /** Delivers each read batch in a random order (at most 64 messages per shuffle). */
    static final class Shuffler extends ChannelInboundHandlerAdapter {
        private final Random random = new Random(42);
        private final List<Object> batch = new ArrayList<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            batch.add(msg);
            if (batch.size() == 64) {
                release(ctx);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            release(ctx);
            ctx.fireChannelReadComplete();
        }

        private void release(ChannelHandlerContext ctx) {
            Collections.shuffle(batch, random);
            List<Object> out = new ArrayList<>(batch);
            batch.clear();
            out.forEach(ctx::fireChannelRead);
        }
    }
}
