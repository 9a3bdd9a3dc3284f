package dev.iwarp.server;

import ch.qos.logback.classic.LoggerContext;
import io.netty.channel.DefaultEventLoopGroup;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An OutOfMemoryError ends the process wherever it is thrown: where Netty catches it and logs it (a task on an
 * event loop, an exception reaching a pipeline's tail), and where a thread dies of it. Here the exit is recorded
 * instead of halting the JVM; one line, once.
 */
class OutOfMemoryExitTest {
    private final List<String> exits = new CopyOnWriteArrayList<>();
    private OutOfMemoryExit handler;
    private LoggerContext context;

    @BeforeEach
    void install() {
        handler = new OutOfMemoryExit(exits::add, null);
        handler.start();
        context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.addTurboFilter(handler);
    }

    @AfterEach
    void remove() {
        context.getTurboFilterList().remove(handler);
    }

    @Test
    void anErrorCaughtAndLoggedEndsTheProcess() {
        // as the RDMA engine logs what reached its exceptionCaught: the error as SLF4J's last argument
        LoggerFactory.getLogger("test").warn("{} closing after an unexpected error", "[id: 0x1]",
                new OutOfMemoryError("Java heap space"));
        assertEquals(1, exits.size(), exits::toString);
        assertTrue(exits.get(0).contains("out of memory (Java heap space)"), exits.get(0));
        assertTrue(exits.get(0).endsWith("exiting with status 3"), exits.get(0));
    }

    @SuppressWarnings("deprecation") // a plain (non-I/O) event loop runs the task, as Netty's own loops do
    @Test
    void anErrorInAnEventLoopTaskEndsTheProcessOnce() throws Exception {
        // whether Netty logs the task's error and goes on or lets it end the thread, the exit sees it
        DefaultEventLoopGroup loop = new DefaultEventLoopGroup(1, r -> {
            Thread t = new Thread(r, "loop-1");
            t.setUncaughtExceptionHandler(handler);
            return t;
        });
        try {
            for (int i = 0; i < 3; i++) {
                try {
                    loop.execute(() -> {
                        throw new OutOfMemoryError("Direct buffer memory");
                    });
                } catch (RejectedExecutionException e) {
                    break; // the first error ended the loop's thread before this task was queued: the other outcome
                }
            }
            for (int i = 0; i < 200 && exits.isEmpty(); i++) {
                Thread.sleep(10);
            }
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
        assertEquals(1, exits.size(), "one line: " + exits);
    }

    @Test
    void aThreadDyingOfItEndsTheProcess() throws Exception {
        Thread t = new Thread(() -> {
            throw new IllegalStateException("wrapped", new OutOfMemoryError("Metaspace"));
        }, "worker-1");
        t.setUncaughtExceptionHandler(handler);
        t.start();
        t.join(10_000);
        assertEquals(1, exits.size());
        assertTrue(exits.get(0).contains("in thread worker-1"), exits.get(0));
    }

    @Test
    void otherErrorsDoNot() {
        LoggerFactory.getLogger("test").warn("closing after an unexpected error", new IllegalStateException("not memory"));
        LoggerFactory.getLogger("test").info("no memory to place its message into: Direct buffer memory");
        assertEquals(0, exits.size());
    }
}
