package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

import java.util.function.Consumer;

/**
 * An {@link OutOfMemoryError} anywhere ends the process with one line on standard error and exit status
 * {@link #EXIT_STATUS}: a server that lost an event-loop thread or its log limiter to one is half dead (pings fail,
 * SIGTERM no longer stops it), and a JVM cannot be trusted to recover from one. It catches what dies uncaught (a
 * thread's default handler) and what a library catches and logs instead (Netty logs a task's or a pipeline's
 * exception and goes on): every log event that carries one, through a Logback turbo filter, before it is formatted.
 * {@code -XX:+ExitOnOutOfMemoryError} does the first only for the JVM's own errors, and a jar cannot set it.
 */
final class OutOfMemoryExit extends TurboFilter implements Thread.UncaughtExceptionHandler {
    /** The exit status after an OutOfMemoryError. */
    static final int EXIT_STATUS = 3;

    private final Consumer<String> exit;
    private final Thread.UncaughtExceptionHandler previous;
    private volatile boolean exiting;

    OutOfMemoryExit(Consumer<String> exit, Thread.UncaughtExceptionHandler previous) {
        this.exit = exit;
        this.previous = previous;
    }

    /** Installs the process-wide handler and filter: the line goes to standard error, then the JVM halts. */
    static void install() {
        OutOfMemoryExit handler = new OutOfMemoryExit(line -> {
            System.err.println(line);
            System.err.flush();
            Runtime.getRuntime().halt(EXIT_STATUS); // no shutdown hooks: they would need the memory that ran out
        }, Thread.getDefaultUncaughtExceptionHandler());
        Thread.setDefaultUncaughtExceptionHandler(handler);
        handler.start();
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext) {
            // as the one filter of the context with those it has: Logback allocates per logging call for two
            TurboFilterChain.add((LoggerContext) LoggerFactory.getILoggerFactory(), handler);
        }
    }

    /** The OutOfMemoryError in {@code t}'s cause chain, or {@code null}. */
    static OutOfMemoryError outOfMemory(Throwable t) {
        for (int depth = 0; t != null && depth < 16; depth++, t = t.getCause()) {
            if (t instanceof OutOfMemoryError) {
                return (OutOfMemoryError) t;
            }
        }
        return null;
    }

    private void check(Throwable t, String thread) {
        OutOfMemoryError e = outOfMemory(t);
        if (e != null && !exiting) {
            exiting = true;
            exit.accept("iwarp-server: out of memory (" + e.getMessage() + ") in thread " + thread + "; exiting with status "
                    + EXIT_STATUS);
        }
    }

    @Override
    public void uncaughtException(Thread t, Throwable e) {
        check(e, t.getName());
        if (previous != null) {
            previous.uncaughtException(t, e);
        } else if (!(e instanceof ThreadDeath)) {
            System.err.print("Exception in thread \"" + t.getName() + "\" ");
            e.printStackTrace(System.err);
        }
    }

    @Override
    public FilterReply decide(Marker marker, ch.qos.logback.classic.Logger logger, Level level, String format,
                              Object[] params, Throwable t) {
        if (t != null) {
            check(t, Thread.currentThread().getName());
        } else if (params != null && params.length > 0 && params[params.length - 1] instanceof Throwable) {
            check((Throwable) params[params.length - 1], Thread.currentThread().getName()); // SLF4J's last argument
        }
        return FilterReply.NEUTRAL;
    }
}
