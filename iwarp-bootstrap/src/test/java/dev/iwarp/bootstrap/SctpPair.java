package dev.iwarp.bootstrap;

import dev.iwarp.rdmap.engine.RdmaEngine;
import dev.iwarp.sctp.SctpSettings;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaDevice;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.local.LocalServerChannel;
import io.netty.channel.sctp.SctpMessage;
import io.netty.util.ReferenceCountUtil;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Two iWARP endpoints over an in-memory SCTP: {@link LocalChannel}s carrying {@code SctpMessage}s
 * (what NioSctpChannel delivers: one user message each, boundaries kept), the indication static on
 * both sides; a message without data is not sent, as NioSctpChannel sends none. With {@code unordered},
 * each side's arrivals are delivered out of order ({@link Shuffler}), as unordered SCTP delivery may
 * do, so the AWS resequencing does real work.
 *
 * <p>The two ends' writes are serialized ({@link PairedLocalChannel}). An SCTP association delivers
 * what was sent before a SHUTDOWN ahead of it; a {@link LocalChannel} can lose it: when one end writes
 * while the other is itself inside a write, the reader's read is re-queued behind any close the writer
 * queues next, and the close drops the unread message (seen as a Terminate that never arrived).
 */
@SuppressWarnings("try") // close() waits for the event loops to stop, so it may be interrupted
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
    /** Read batches the {@link Shuffler}s passed on in another order than they arrived. */
    final AtomicInteger reordered = new AtomicInteger();
    /** Messages either end has sent: how a test tells a slow transfer (a loaded machine) from a stalled one. */
    final AtomicLong messages = new AtomicLong();

    /** The pair's default settings: the indication static on both sides. */
    static SctpSettings.Builder settings() {
        return SctpSettings.builder().staticPeer(dev.iwarp.sctp.SctpIndication.RDMA_AND_NEGOTIATION);
    }

    SctpPair(SctpSettings settings, boolean unordered) throws Exception {
        SctpFraming framing = SctpFraming.of(settings);
        LocalAddress address = new LocalAddress("sctp-pair-" + System.nanoTime());
        CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
        CompletableFuture<Channel> accepting = new CompletableFuture<>();
        listener = new ServerBootstrap().group(group).channelFactory(PairedLocalServerChannel::new)
                .childHandler(new ChannelInitializer<LocalChannel>() {
                    @Override
                    protected void initChannel(LocalChannel ch) {
                        ch.pipeline().addLast(new NoEmptyMessages(messages));
                        if (unordered) {
                            ch.pipeline().addLast(new Shuffler(reordered));
                        }
                        IwarpPipeline.addResponder(ch.pipeline(), framing, req -> {
                            accepting.complete(req.channel());
                            accepted.complete(req.accept(spd, serverSend, serverRecv, new byte[0]));
                        });
                    }
                }).bind(address).sync().channel();
        RdmaEngine engine = new RdmaEngine(cpd, clientSend, clientRecv);
        clientChannel = new Bootstrap().group(group).channelFactory(() -> new PairedLocalChannel(new Object()))
                .handler(new ChannelInitializer<LocalChannel>() {
                    @Override
                    protected void initChannel(LocalChannel ch) {
                        ch.pipeline().addLast(new NoEmptyMessages(messages));
                        if (unordered) {
                            ch.pipeline().addLast(new Shuffler(reordered));
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

    /** A {@link LocalChannel} whose writes exclude its peer's (see the class doc): both ends share one lock. */
    static final class PairedLocalChannel extends LocalChannel {
        private final Object writeLock;

        PairedLocalChannel(Object writeLock) {
            this.writeLock = writeLock;
        }

        PairedLocalChannel(LocalServerChannel parent, PairedLocalChannel peer) {
            super(parent, peer);
            this.writeLock = peer.writeLock;
        }

        @Override
        protected void doWrite(ChannelOutboundBuffer in) throws Exception {
            synchronized (writeLock) { // never blocks on the other event loop: a write only queues to the peer
                super.doWrite(in);
            }
        }
    }

    /**
     * Sends nothing for a message without data, as NioSctpChannel does (SCTP has no empty DATA chunk); counts
     * the messages sent.
     */
    static final class NoEmptyMessages extends ChannelOutboundHandlerAdapter {
        private final AtomicLong sent;

        NoEmptyMessages(AtomicLong sent) {
            this.sent = sent;
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (msg instanceof SctpMessage && !((SctpMessage) msg).content().isReadable()) {
                ReferenceCountUtil.release(msg);
                promise.trySuccess();
                return;
            }
            sent.incrementAndGet();
            ctx.write(msg, promise);
        }
    }

    /** Accepts {@link PairedLocalChannel}s that share the connecting channel's lock. */
    static final class PairedLocalServerChannel extends LocalServerChannel {
        @Override
        protected LocalChannel newLocalChannel(LocalChannel peer) {
            return new PairedLocalChannel(this, (PairedLocalChannel) peer);
        }
    }

    /**
     * Delivers arrivals out of order, as unordered SCTP delivery may: holds each arrival until 2 to 8 are
     * held (or 1 ms passed since the first), then passes them on shuffled as one read batch. A
     * {@link LocalChannel} delivers one message per read batch, so shuffling within a batch would reorder
     * nothing. What is held when the peer closes goes up before the close, as SCTP delivers what was sent
     * before a SHUTDOWN.
     */
    static final class Shuffler extends ChannelInboundHandlerAdapter {
        private final Random random = new Random(42);
        private final List<Object> held = new ArrayList<>();
        private final AtomicInteger reordered;
        private int releaseAt = 2;
        private ScheduledFuture<?> timer;

        Shuffler(AtomicInteger reordered) {
            this.reordered = reordered;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            held.add(msg);
            if (held.size() >= releaseAt) {
                release(ctx);
            } else if (timer == null) {
                timer = ctx.executor().schedule(() -> release(ctx), 1, TimeUnit.MILLISECONDS);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            // the batch ends when what is held is released
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            release(ctx);
            ctx.fireChannelInactive();
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            held.forEach(ReferenceCountUtil::release);
            held.clear();
        }

        private void release(ChannelHandlerContext ctx) {
            if (timer != null) {
                timer.cancel(false);
                timer = null;
            }
            if (held.isEmpty()) {
                return;
            }
            List<Object> out = new ArrayList<>(held);
            Collections.shuffle(out, random);
            for (int i = 0; i < out.size(); i++) {
                if (out.get(i) != held.get(i)) {
                    reordered.incrementAndGet();
                    break;
                }
            }
            held.clear();
            releaseAt = 2 + random.nextInt(7);
            out.forEach(ctx::fireChannelRead);
            ctx.fireChannelReadComplete();
        }
    }
}
