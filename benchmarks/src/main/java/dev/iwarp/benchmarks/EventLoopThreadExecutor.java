package dev.iwarp.benchmarks;

import io.netty.util.concurrent.FastThreadLocalThread;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * JMH worker pool ({@code -Djmh.executor=CUSTOM -Djmh.executor.class=dev.iwarp.benchmarks.EventLoopThreadExecutor})
 * whose threads are Netty {@link FastThreadLocalThread}s, like an event loop's.
 *
 * <p>Netty 4.2 recycles buffer wrappers ({@code Recycler}) and uses per-thread allocator caches only
 * on such threads; on JMH's plain worker threads every pooled {@code ByteBuf} object, duplicate and
 * slice is a fresh allocation, which is not what the codecs see in a real pipeline.
 */
public final class EventLoopThreadExecutor extends ThreadPoolExecutor {
    /** The constructor JMH's CUSTOM executor type calls. */
    public EventLoopThreadExecutor(int maxThreads, String prefix) {
        super(maxThreads, maxThreads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), new Factory(prefix));
    }

    private static final class Factory implements java.util.concurrent.ThreadFactory {
        private final String prefix;
        private final AtomicInteger next = new AtomicInteger();

        Factory(String prefix) {
            this.prefix = prefix;
        }

        @Override
        public Thread newThread(Runnable r) {
            Thread t = new FastThreadLocalThread(r, prefix + "-" + next.incrementAndGet());
            t.setDaemon(true);
            return t;
        }
    }
}
