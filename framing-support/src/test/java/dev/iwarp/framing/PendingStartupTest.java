package dev.iwarp.framing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The order in which a startup's end reaches its waiters, which MPA's and IFT's startup handlers rely on. */
class PendingStartupTest {
    /** In order: the promise's outcome, events seen above the handler, what the framer was handed. */
    private final List<String> seen = new ArrayList<>();

    /** A startup handler reduced to its pending startup: every write and flush is held. */
    private final class Startup extends ChannelDuplexHandler {
        PendingStartup<String> pending;
        ChannelHandlerContext ctx;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
            pending = new PendingStartup<>(ctx);
            PendingStartup.futureOf(pending).addListener(f -> seen.add(f.isSuccess() ? "promise:" + f.getNow()
                    : "promise failed"));
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            promise.addListener(f -> seen.add(f.isSuccess() ? "written" : "write failed"));
            pending.hold(ctx, msg, promise);
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            pending.holdFlush();
        }
    }

    /** The handler above: records the events the startup fires. */
    private final class Above extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            seen.add("event:" + evt);
        }
    }

    /** A framer reduced to recording what it is handed. */
    private final class Framer extends ChannelDuplexHandler {
        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            seen.add("framer:" + ((ByteBuf) msg).getByte(0));
            ((ByteBuf) msg).release();
            promise.setSuccess();
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            seen.add("framer:flush");
        }
    }

    @Test
    void successCompletesThePromiseThenFiresTheEventThenHandsTheWritesToTheFramer() {
        Startup startup = new Startup();
        EmbeddedChannel ch = new EmbeddedChannel(startup, new Above());
        ch.writeAndFlush(Unpooled.buffer(1).writeByte(7));
        Framer framer = new Framer();
        ChannelHandlerContext framerCtx = HeldWrites.addFramerAfter(startup.ctx, "framer", framer);
        startup.pending.succeeded(startup.ctx, "params", "established", framer, framerCtx);
        assertEquals(List.of("promise:params", "event:established", "framer:7", "written", "framer:flush"), seen);
        assertFalse(ch.finish());
    }

    @Test
    void failureFailsTheHeldWritesThenThePromiseThenFiresTheEvent() {
        Startup startup = new Startup();
        EmbeddedChannel ch = new EmbeddedChannel(startup, new Above());
        ByteBuf ulpdu = Unpooled.buffer(1).writeByte(7);
        ch.writeAndFlush(ulpdu);
        IllegalStateException cause = new IllegalStateException("refused");
        startup.pending.failed(startup.ctx, cause, "failed");
        assertEquals(List.of("write failed", "promise failed", "event:failed"), seen);
        assertEquals(0, ulpdu.refCnt());
        assertSame(cause, PendingStartup.futureOf(startup.pending).cause());
        assertFalse(ch.finish());
    }

    @Test
    void theTimerFiresOnceDueUnlessStoppedAndAbandonFailsWhatIsHeld() {
        Startup startup = new Startup();
        EmbeddedChannel ch = new EmbeddedChannel(startup, new Above());
        ch.freezeTime();
        startup.pending.startTimer(startup.ctx, 1000, () -> seen.add("timeout"));
        ch.advanceTimeBy(999, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertTrue(seen.isEmpty(), "not yet due");
        ch.advanceTimeBy(1, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertEquals(List.of("timeout"), seen);

        seen.clear();
        startup.pending.startTimer(startup.ctx, 1000, () -> seen.add("timeout"));
        ChannelPromise write = ch.newPromise();
        ch.write(Unpooled.buffer(1).writeByte(1), write);
        startup.pending.abandon();
        ch.advanceTimeBy(2000, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertEquals(List.of("write failed"), seen, "no timeout once abandoned");
        assertInstanceOf(ClosedChannelException.class, write.cause());
        assertFalse(ch.finish());
    }

    @Test
    void noFutureBeforeTheHandlerIsInAPipeline() {
        assertThrows(IllegalStateException.class, () -> PendingStartup.futureOf(null));
    }
}
