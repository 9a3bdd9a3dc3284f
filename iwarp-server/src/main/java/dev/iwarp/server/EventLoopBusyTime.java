package dev.iwarp.server;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoRegistration;
import io.netty.util.concurrent.ThreadAwareExecutor;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * How long each event loop is busy, for {@code serve}'s metrics: it wraps the loops' {@link IoHandler}s
 * ({@code IwarpStack.Builder.ioHandlerFactory}). Busy is the I/O processing the handler reports as active (Netty 4.2's
 * {@link IoHandlerContext#reportActiveIoTime}: reading, writing and the pipeline handlers they run; NIO and epoll
 * report it) plus the time between two I/O passes, where the loop runs its tasks and timers. Waiting in
 * {@code select}/{@code epoll_wait} is idle. Costs two clock reads and one ordered store per loop iteration, nothing
 * per message, no allocation.
 */
final class EventLoopBusyTime implements UnaryOperator<IoHandlerFactory> {
    private final List<Loop> loops = new CopyOnWriteArrayList<>();
    private final Consumer<Loop> created;

    /** {@code created}: told of every loop's measure when its handler is made (registers its meter). */
    EventLoopBusyTime(Consumer<Loop> created) {
        this.created = created;
    }

    @Override
    public IoHandlerFactory apply(IoHandlerFactory factory) {
        return new IoHandlerFactory() {
            @Override
            public IoHandler newHandler(ThreadAwareExecutor executor) {
                Loop loop;
                synchronized (loops) {
                    loop = new Loop(factory.newHandler(executor), loops.size());
                    loops.add(loop);
                }
                created.accept(loop);
                return loop;
            }

            @Override
            public boolean isChangingThreadSupported() {
                return factory.isChangingThreadSupported();
            }
        };
    }

    /** Every loop measured so far. */
    List<Loop> loops() {
        return List.copyOf(loops);
    }

    /** One event loop's handler, measured; also the context its handler reports to. */
    static final class Loop implements IoHandler, IoHandlerContext {
        private final IoHandler handler;
        private final int index;
        private IoHandlerContext loop;
        /** When the last I/O pass returned; 0 before the first. Loop thread only. */
        private long passEnded;
        /** Busy nanoseconds so far: written by the loop thread only, read by any. */
        private final SingleWriterCounter busy = new SingleWriterCounter();

        Loop(IoHandler handler, int index) {
            this.handler = handler;
            this.index = index;
        }

        /** The loop's number, in the order the loops were made (the {@code loop} label). */
        int index() {
            return index;
        }

        /** Busy time so far, in nanoseconds. */
        long busyNanos() {
            return busy.get();
        }

        private void add(long nanos) {
            if (nanos > 0) {
                busy.add(nanos);
            }
        }

        @Override
        public int run(IoHandlerContext context) {
            long start = System.nanoTime();
            if (passEnded != 0) {
                add(start - passEnded); // the loop ran its tasks since the last pass
            }
            loop = context;
            try {
                return handler.run(this);
            } finally {
                passEnded = System.nanoTime();
            }
        }

        @Override
        public boolean canBlock() {
            return loop.canBlock();
        }

        @Override
        public long delayNanos(long currentTimeNanos) {
            return loop.delayNanos(currentTimeNanos);
        }

        @Override
        public long deadlineNanos() {
            return loop.deadlineNanos();
        }

        @Override
        public boolean shouldReportActiveIoTime() {
            return true;
        }

        @Override
        public void reportActiveIoTime(long activeNanos) {
            add(activeNanos);
            if (loop.shouldReportActiveIoTime()) {
                loop.reportActiveIoTime(activeNanos); // Netty's own use (auto-scaling loops)
            }
        }

        @Override
        public void initialize() {
            handler.initialize();
        }

        @Override
        public void prepareToDestroy() {
            handler.prepareToDestroy();
        }

        @Override
        public void destroy() {
            handler.destroy();
        }

        @Override
        public IoRegistration register(IoHandle handle) throws Exception {
            return handler.register(handle);
        }

        @Override
        public void wakeup() {
            handler.wakeup();
        }

        @Override
        public boolean isCompatible(Class<? extends IoHandle> handleType) {
            return handler.isCompatible(handleType);
        }
    }
}
