package dev.iwarp.verbs;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The engine's reusable write promise through a real channel's outbound buffer. */
class WritePromiseTest {
    private final List<String> events = new ArrayList<>();

    private final class Recorded extends WritePromise {
        Recorded(EmbeddedChannel ch) {
            super(ch);
        }

        @Override
        protected void written(Throwable cause) {
            events.add(cause == null ? "written" : "failed " + cause.getClass().getSimpleName());
        }
    }

    private static ByteBuf octets(int n) {
        return Unpooled.buffer(n).writeZero(n);
    }

    @Test
    void reportsEachWriteOnceWhenTheOutboundBufferWroteItAndIsArmedAgainForTheNext() {
        EmbeddedChannel ch = new EmbeddedChannel();
        Recorded p = new Recorded(ch);
        ch.write(octets(10), p);
        assertFalse(p.isDone(), "not written before the flush");
        assertThrows(UnsupportedOperationException.class, p::sync, "a pending write promise is not waited for");
        assertEquals(List.of(), events);
        ch.flush();
        assertEquals(List.of("written"), events);
        assertTrue(p.isSuccess());
        assertFalse(p.trySuccess(), "a second report is refused");
        assertFalse(p.tryFailure(new IllegalStateException()));
        assertEquals(List.of("written"), events);

        p.rearm();
        assertFalse(p.isDone());
        assertThrows(IllegalStateException.class, p::rearm, "pending: its write has not been reported");
        ch.writeAndFlush(octets(20), p);
        assertEquals(List.of("written", "written"), events);
        assertEquals(10, ch.<ByteBuf>readOutbound().readableBytes());
        ByteBuf second = ch.readOutbound();
        assertEquals(20, second.readableBytes());
        second.release();
        ch.finishAndReleaseAll();
    }

    @Test
    void listenersAHandlerBelowAddsAreToldBeforeTheEngineAndSeeTheOutcome() {
        EmbeddedChannel ch = new EmbeddedChannel(new ChannelOutboundHandlerAdapter() {
            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                promise.addListener(f -> events.add("handler sees " + (f.isSuccess() ? "success" : f.cause())));
                ctx.write(msg, promise);
            }
        });
        Recorded p = new Recorded(ch);
        ch.writeAndFlush(octets(1), p);
        assertEquals(List.of("handler sees success", "written"), events);
        p.addListener(f -> events.add("late listener told at once"));
        assertEquals("late listener told at once", events.get(2));
        ch.finishAndReleaseAll();
    }

    @Test
    void aWriteTheChannelDropsIsReportedAsFailed() {
        EmbeddedChannel ch = new EmbeddedChannel();
        Recorded p = new Recorded(ch);
        ch.write(octets(5), p);
        ch.close();
        assertEquals(1, events.size());
        assertTrue(events.get(0).startsWith("failed "), events::toString);
        assertTrue(p.isDone());
        assertFalse(p.isSuccess());
        assertInstanceOf(ClosedChannelException.class, p.cause());
        ch.finishAndReleaseAll();
    }
}
