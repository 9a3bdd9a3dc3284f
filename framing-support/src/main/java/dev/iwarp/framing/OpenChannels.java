package dev.iwarp.framing;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The channels a stack or provider made (listening sockets, accepted and initiated connections) that are still
 * open, so that its {@code close} closes them while their event loops still run normally, before it shuts the
 * loops down. A loop's own shutdown closes what is still registered too, but its last round runs no task queued
 * after it ended, and a closed channel's {@code channelInactive} and handler removal are such tasks: what the
 * handlers hold then is never released (queued Read Responses and their copies, FPDUs held by RFC 5044 §7.1.2
 * rule 4, writes TLS holds, VI/TCP's queued Send segments, whose payloads are slices of a registered region that
 * then keeps its memory after it was deregistered). Thread-safe.
 */
public final class OpenChannels {
    private final Set<Channel> open = ConcurrentHashMap.newKeySet();

    /** Tracks {@code ch} until it closes. */
    public void add(Channel ch) {
        open.add(ch);
        ch.closeFuture().addListener(f -> open.remove(ch));
    }

    /** Channels tracked (the open ones). */
    public int size() {
        return open.size();
    }

    /**
     * Closes every open channel on its event loop (as the loop's shutdown would: queued writes failed and released),
     * then waits until each loop has run what the closes queued (each channel's {@code channelInactive} and handler
     * removal). Waits {@code timeoutMillis} at most per step; from any thread but one of these channels' loops.
     */
    public void closeAll(long timeoutMillis) {
        List<Future<?>> closes = new ArrayList<>();
        Set<EventLoop> loops = new LinkedHashSet<>();
        for (Channel ch : open) {
            if (!ch.isRegistered()) {
                ch.close(); // not on a loop yet: nothing is queued
                continue;
            }
            EventLoop loop = ch.eventLoop();
            loops.add(loop);
            try {
                closes.add(loop.submit(() -> ch.unsafe().close(ch.unsafe().voidPromise())));
            } catch (RejectedExecutionException e) {
                // the loop is shutting down already: its shutdown closes the channel
            }
        }
        awaitAll(closes, timeoutMillis);
        // the deregistration a close queued runs before a task queued after it, and may queue one more round
        for (int round = 0; round < 2; round++) {
            List<Future<?>> barriers = new ArrayList<>();
            for (EventLoop loop : loops) {
                try {
                    barriers.add(loop.submit(() -> { }));
                } catch (RejectedExecutionException e) {
                    // shutting down already
                }
            }
            awaitAll(barriers, timeoutMillis);
        }
    }

    private static void awaitAll(List<Future<?>> futures, long timeoutMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        for (Future<?> f : futures) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !f.awaitUninterruptibly(TimeUnit.NANOSECONDS.toMillis(left) + 1)) {
                return; // the loop's own shutdown closes what is left
            }
        }
    }
}
