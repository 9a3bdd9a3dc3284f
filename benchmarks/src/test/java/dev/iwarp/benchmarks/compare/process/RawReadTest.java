package dev.iwarp.benchmarks.compare.process;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.local.LocalServerChannel;
import io.netty.channel.ChannelInitializer;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The raw request/response Read: at most depth requests outstanding, exactly the octets asked for, one flush per
 * read batch.
 */
class RawReadTest {
    /** Counts flushes reaching the channel. */
    private static final class Flushes extends ChannelOutboundHandlerAdapter {
        int count;

        @Override
        public void flush(ChannelHandlerContext ctx) {
            count++;
            ctx.flush();
        }
    }

    /** Reads and releases the requests written so far; checks each is 28 octets naming {@code size}. */
    private static int drainRequests(EmbeddedChannel ch, int size) {
        int n = 0;
        for (ByteBuf b; (b = ch.readOutbound()) != null; n++) {
            try {
                assertEquals(RawRead.REQUEST, b.readableBytes());
                assertEquals(size, b.getInt(b.readerIndex() + RawRead.LENGTH_OFFSET));
            } finally {
                b.release();
            }
        }
        return n;
    }

    @Test
    void requesterKeepsAtMostDepthOutstandingAndRefillsPerCompletedResponse() {
        int size = 1000;
        int depth = 4;
        AtomicBoolean stopped = new AtomicBoolean();
        RawRead.Requester r = new RawRead.Requester(size, depth, stopped::get);
        Flushes flushes = new Flushes();
        EmbeddedChannel ch = new EmbeddedChannel(flushes, r);
        assertEquals(0, drainRequests(ch, size), "nothing before start");
        r.start();
        r.start();
        assertEquals(depth, drainRequests(ch, size));
        assertEquals(1, flushes.count);
        long requested = depth;
        long delivered = 0;
        // responses in pieces of 333 octets, three pieces per read batch: a request leaves per completed response
        for (int batch = 0; batch < 40; batch++) {
            ByteBuf[] pieces = new ByteBuf[3];
            for (int i = 0; i < 3; i++) {
                pieces[i] = Unpooled.buffer(333).writeZero(333);
            }
            int flushesBefore = flushes.count;
            ch.writeInbound((Object[]) pieces);
            delivered += 999;
            long completed = delivered / size;
            int written = drainRequests(ch, size);
            requested += written;
            assertEquals(completed + depth, requested, "one request per completed response, batch " + batch);
            assertEquals(flushesBefore + (written > 0 ? 1 : 0), flushes.count, "one flush per read batch");
            assertTrue(r.sent() - r.completed() <= depth);
            assertTrue(requested * size >= delivered, "never more octets than requested");
        }
        assertEquals(depth, r.maxOutstanding());
        assertEquals(delivered, r.receivedOctets());
        assertEquals(requested, r.sent());
        stopped.set(true);
        ch.writeInbound(Unpooled.buffer(size).writeZero(size));
        assertEquals(0, drainRequests(ch, size), "no request once stopped");
        assertFalse(ch.finish());
    }

    @Test
    void responderAnswersExactlyTheOctetsEachRequestNames() {
        int size = 4096;
        ByteBuf response = PooledByteBufAllocator.DEFAULT.directBuffer(size).writeZero(size);
        Flushes flushes = new Flushes();
        EmbeddedChannel ch = new EmbeddedChannel(flushes, new RawRead.Responder(response));
        int[] lengths = {size, 1, size / 2, size, 0, size};
        ByteBuf requests = Unpooled.buffer();
        for (int len : lengths) {
            ByteBuf q = RawRead.request(len);
            requests.writeBytes(q);
            q.release();
        }
        // split at awkward places: inside the first request, across the second and third, then the rest
        int[] cuts = {5, 40, 17, requests.readableBytes() - 62};
        for (int cut : cuts) {
            ch.writeInbound(requests.readRetainedSlice(cut));
        }
        requests.release();
        assertEquals(cuts.length - 1, flushes.count, "one flush per read batch that completed a request");
        for (int len : lengths) {
            ByteBuf out = ch.readOutbound();
            assertEquals(len, out.readableBytes());
            assertTrue(out.isDirect(), "from the pooled direct buffer");
            out.release();
        }
        assertNull(ch.readOutbound());
        ByteBuf tooLong = RawRead.request(size + 1);
        assertThrows(IllegalArgumentException.class, () -> ch.writeInbound(tooLong));
        assertFalse(ch.finish());
        assertEquals(0, response.refCnt(), "released with the channel");
    }

    @Test
    void overAChannelEveryRequestIsAnsweredAndNoMoreThanDepthAreOutstanding() throws Exception {
        int size = 3000;
        int depth = 8;
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, LocalIoHandler.newFactory());
        AtomicBoolean stopped = new AtomicBoolean();
        RawRead.Requester requester = new RawRead.Requester(size, depth, stopped::get);
        CompletableFuture<RawRead.Responder> responder = new CompletableFuture<>();
        try {
            LocalAddress address = new LocalAddress(RawReadTest.class);
            Channel server = new ServerBootstrap().group(group).channel(LocalServerChannel.class)
                    .childHandler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            RawRead.Responder r = new RawRead.Responder(
                                    PooledByteBufAllocator.DEFAULT.directBuffer(size).writeZero(size));
                            ch.pipeline().addLast(r);
                            responder.complete(r);
                        }
                    }).bind(address).sync().channel();
            Channel client = new Bootstrap().group(group).channel(LocalChannel.class).handler(requester)
                    .connect(address).sync().channel();
            client.eventLoop().execute(requester::start);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (requester.completed() < 2000 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            client.eventLoop().submit(() -> stopped.set(true)).get(60, TimeUnit.SECONDS);
            RawRead.Responder r = responder.get(60, TimeUnit.SECONDS);
            while ((requester.receivedOctets() < requester.sent() * size || r.answered() < requester.sent())
                    && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertTrue(requester.completed() >= 2000, "completed " + requester.completed());
            assertEquals(requester.sent(), r.answered(), "every request answered");
            assertEquals(requester.sent() * size, requester.receivedOctets(), "exactly the octets requested");
            assertEquals(depth, client.eventLoop().submit(requester::maxOutstanding).get(60, TimeUnit.SECONDS));
            client.close().sync();
            server.close().sync();
        } finally {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void modesByTheirCommandLineNames() {
        assertEquals(RawRead.Mode.STREAM, RawRead.Mode.parse("stream"));
        assertEquals(RawRead.Mode.REQUEST_RESPONSE, RawRead.Mode.parse("request-response"));
        assertEquals("request-response", RawRead.Mode.REQUEST_RESPONSE.cliName());
        assertThrows(IllegalArgumentException.class, () -> RawRead.Mode.parse("bulk"));
    }

    @Test
    void theProcessClientAsksThePeerForTheOldSourceOnStream() {
        // the old client's header modes: S sink for Writes, W source for Reads, E echo otherwise
        assertEquals('W', RawClient.mode("read", RawRead.Mode.STREAM));
        assertEquals('R', RawClient.mode("read", RawRead.Mode.REQUEST_RESPONSE));
        for (RawRead.Mode m : RawRead.Mode.values()) {
            assertEquals('S', RawClient.mode("write", m));
            assertEquals('E', RawClient.mode("pingpong", m));
            assertEquals('E', RawClient.mode("pipeline", m));
        }
    }
}
