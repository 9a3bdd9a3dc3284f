package dev.iwarp.benchmarks.compare;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import org.HdrHistogram.Histogram;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * One side of a comparison (our stack or raw Netty) for one case: opens a loopback connection with one
 * event loop per side, drives traffic from the event loops (never from the caller's thread), and
 * exposes what {@link Compare} samples: messages, octets, round-trip times, the two event-loop threads.
 * Counters are written by one event loop only and read by the measuring thread.
 */
@SuppressWarnings("try") // close() waits for the event loops to stop, so it may be interrupted
abstract class CompareRun implements AutoCloseable {
    final CompareCase c;
    volatile boolean stopped;
    volatile Throwable failure;
    /** Messages done (Write/Read/Send completed, round trips, or frames received); single writer. */
    volatile long messages;
    /** Round-trip times in ns (ping-pong), recorded on the client loop. */
    final Histogram rtt = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
    EventLoop clientLoop;
    EventLoop serverLoop;
    /** Our stack's two channels once open, for {@link PerMessageCounts}; null for raw Netty. */
    Channel clientChannel;
    Channel serverChannel;

    CompareRun(CompareCase c) {
        this.c = c;
    }

    /** Connects; on return both loops are known and the connection is ready for {@link #start()}. */
    abstract void open() throws Exception;

    /** Starts traffic (schedules it on the client loop). */
    abstract void start();

    /** Messages so far (default: the counter). */
    long messages() {
        return messages;
    }

    void fail(Object why) {
        if (failure == null) {
            failure = why instanceof Throwable t ? t : new IllegalStateException(String.valueOf(why));
        }
        stopped = true;
    }

    /** Runs {@code task} on the client loop and waits: a happens-before edge for the histogram. */
    void onClientLoop(Runnable task) throws Exception {
        clientLoop.submit(task).get(10, TimeUnit.SECONDS);
    }

    static Thread threadOf(EventLoop loop) throws Exception {
        return loop.submit(Thread::currentThread).get(10, TimeUnit.SECONDS);
    }

    /** The Linux thread id of the loop's thread (for {@code /proc} and {@code perf}). */
    static String linuxTid(EventLoop loop) throws Exception {
        return loop.submit(() -> Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString())
                .get(10, TimeUnit.SECONDS);
    }

    @Override
    public abstract void close() throws Exception;
}
