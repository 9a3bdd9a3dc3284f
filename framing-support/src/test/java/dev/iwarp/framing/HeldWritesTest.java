package dev.iwarp.framing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The held-writes contract every framing's startup handler relies on. */
class HeldWritesTest {

    /** A startup handler reduced to holding: every write and flush is held. */
    private static final class Holder extends ChannelDuplexHandler {
        final HeldWrites held = new HeldWrites();
        ChannelHandlerContext ctx;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            held.hold(ctx, msg, promise);
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            held.holdFlush();
        }
    }

    /** A framer reduced to recording what it is handed, in order ("w:<octet>" or "flush"). */
    private static final class Recorder extends ChannelDuplexHandler {
        final List<String> seen = new ArrayList<>();

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            ByteBuf b = (ByteBuf) msg;
            seen.add("w:" + b.getByte(0));
            b.release();
            promise.setSuccess();
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            seen.add("flush");
        }
    }

    @Test
    void heldWritesCountTowardWritabilityAndGoToTheFramerInOrderThenTheFlush() {
        Holder holder = new Holder();
        EmbeddedChannel ch = new EmbeddedChannel(holder);
        ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(32, 64));
        List<ChannelPromise> promises = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ChannelPromise p = ch.newPromise();
            promises.add(p);
            ch.pipeline().write(Unpooled.buffer(40).writeByte(i).writeZero(39), p);
        }
        ch.pipeline().flush();
        assertFalse(holder.held.isEmpty());
        assertFalse(ch.isWritable(), "120 held octets are over the 64-octet high-water mark");
        assertNull(ch.readOutbound(), "nothing passed while held");

        Recorder framer = new Recorder();
        ChannelHandlerContext framerCtx = HeldWrites.addFramerAfter(holder.ctx, "framer", framer);
        assertSame(framer, ch.pipeline().get("framer"));
        holder.held.handOver(framer, framerCtx);
        assertEquals(List.of("w:0", "w:1", "w:2", "flush"), framer.seen);
        assertTrue(holder.held.isEmpty());
        assertTrue(ch.isWritable(), "nothing counted once handed over");
        for (ChannelPromise p : promises) {
            assertTrue(p.isSuccess());
        }
        ChannelHandlerContext second = HeldWrites.addFramerAfter(holder.ctx, "framer", new Recorder());
        assertFalse("framer".equals(second.name()), "a taken name is not reused");
        assertFalse(ch.finish());
    }

    @Test
    void failReleasesEveryHeldWriteAndFailsItsPromise() {
        Holder holder = new Holder();
        EmbeddedChannel ch = new EmbeddedChannel(holder);
        ByteBuf a = Unpooled.buffer(4).writeInt(1);
        ByteBuf b = Unpooled.buffer(4).writeInt(2);
        ChannelPromise pa = ch.newPromise();
        ChannelPromise pb = ch.newPromise();
        ch.pipeline().write(a, pa);
        ch.pipeline().write(b, pb);
        ClosedChannelException cause = new ClosedChannelException();
        holder.held.fail(cause);
        assertEquals(0, a.refCnt());
        assertEquals(0, b.refCnt());
        assertSame(cause, pa.cause());
        assertInstanceOf(ClosedChannelException.class, pb.cause());
        assertTrue(holder.held.isEmpty());
        Recorder framer = new Recorder();
        holder.held.handOver(framer, HeldWrites.addFramerAfter(holder.ctx, "framer", framer));
        assertTrue(framer.seen.isEmpty(), "nothing handed over after a failure, not even the flush");
        assertFalse(ch.finish());
    }
}
