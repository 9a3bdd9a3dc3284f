package dev.iwarp.rdmap.engine.internal;

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
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
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

    // ---------------------------------------------------------------- the ChannelPromise contract

    @Test
    void itIsTheChannelsNonVoidPromiseAndCannotBeCancelled() {
        EmbeddedChannel ch = new EmbeddedChannel();
        Recorded p = new Recorded(ch);
        assertSame(ch, p.channel());
        assertFalse(p.isVoid());
        assertSame(p, p.unvoid());
        assertFalse(p.isCancellable());
        assertFalse(p.cancel(true));
        assertFalse(p.isCancelled());
        assertFalse(p.isDone(), "a refused cancel leaves it pending");
        assertTrue(p.setUncancellable());
        p.setSuccess();
        assertFalse(p.isCancelled());
        assertNull(p.getNow());
        ch.finishAndReleaseAll();
    }

    @Test
    void setAfterCompletionThrowsAndTryReportsFalseWithoutTellingAnyoneAgain() throws Exception {
        EmbeddedChannel ch = new EmbeddedChannel();
        Recorded p = new Recorded(ch);
        IllegalStateException first = new IllegalStateException("first");
        p.setFailure(first);
        assertThrows(IllegalStateException.class, p::setSuccess);
        assertThrows(IllegalStateException.class, () -> p.setFailure(new IllegalStateException()));
        assertFalse(p.trySuccess(null));
        assertSame(first, p.cause(), "the first outcome stands");
        assertEquals(List.of("failed IllegalStateException"), events);
        ExecutionException e = assertThrows(ExecutionException.class, p::get);
        assertSame(first, e.getCause());
        ch.finishAndReleaseAll();
    }

    @Test
    void listenersAreToldOnceInOrderARemovedOneIsNotAndAThrowingOneStopsNoOther() {
        EmbeddedChannel ch = new EmbeddedChannel();
        Recorded p = new Recorded(ch);
        io.netty.util.concurrent.GenericFutureListener<io.netty.util.concurrent.Future<Void>> removed =
                f -> events.add("removed listener told");
        p.addListener(f -> events.add("first"));
        p.addListener(f -> {
            throw new IllegalStateException("a listener's own failure");
        });
        p.addListeners(removed, f -> events.add("second"));
        p.removeListeners(removed);
        p.trySuccess();
        assertEquals(List.of("first", "second", "written"), events);
        p.trySuccess();
        assertEquals(3, events.size(), "told once");
        p.rearm();
        p.trySuccess();
        assertEquals(List.of("first", "second", "written", "written"), events, "rearming drops the listeners");
        ch.finishAndReleaseAll();
    }

    @Test
    void aDonePromiseCanBeWaitedForAtOnceAPendingOneCannot() throws Exception {
        EmbeddedChannel ch = new EmbeddedChannel();
        Recorded p = new Recorded(ch);
        assertThrows(UnsupportedOperationException.class, p::await);
        assertThrows(UnsupportedOperationException.class, () -> p.await(1));
        assertThrows(UnsupportedOperationException.class, p::get);
        p.setSuccess();
        assertSame(p, p.sync());
        assertSame(p, p.awaitUninterruptibly());
        assertTrue(p.await(1, java.util.concurrent.TimeUnit.MILLISECONDS));
        assertNull(p.get());
        ch.finishAndReleaseAll();
    }
}
