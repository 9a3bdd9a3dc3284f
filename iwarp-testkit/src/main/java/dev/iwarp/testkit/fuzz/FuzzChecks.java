package dev.iwarp.testkit.fuzz;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxy;
import ch.qos.logback.core.AppenderBase;
import dev.iwarp.testkit.ApplicationEnd;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * The oracles every fuzz target shares: only the protocol's typed errors may come out of the code
 * under test, whether thrown to the caller, fired down the pipeline or logged with a stack trace by
 * a handler that swallowed it.
 *
 * <p>{@link #captureLogs()} (a target class gets it with {@code @ExtendWith(FuzzLogs.class)}) sends the
 * project's log records of WARN and above to a capture instead of the console, so a fuzzer running
 * thousands of inputs a second is not slowed down by logging, and a swallowed exception is still seen;
 * {@link #restoreLogs()} undoes it.
 */
public final class FuzzChecks {
    private static final String PROJECT_LOGGER = "dev.iwarp";
    /** Netty's wrapper for what a decoder threw (netty-codec is not a dependency of the test kit). */
    private static final String NETTY_DECODER_EXCEPTION = "io.netty.handler.codec.DecoderException";
    private static final Capture CAPTURE = new Capture();
    private static Level savedLevel;
    private static boolean savedAdditive = true;

    private FuzzChecks() {
    }

    /** Closes {@code ch} and releases what it holds; a write the handler failed at the close must be typed too. */
    public static void finish(EmbeddedChannel ch, List<Class<? extends Throwable>> allowed) {
        try {
            ch.finishAndReleaseAll();
        } catch (Throwable t) {
            assertTyped(t, allowed);
            ch.releaseInbound();
            ch.releaseOutbound();
        }
    }

    /** Runs {@code ch}'s pending tasks and releases what it sent (a fuzz run reads nothing it sends). */
    public static void drain(EmbeddedChannel ch) {
        ch.runPendingTasks();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            ReferenceCountUtil.release(o);
        }
    }

    /**
     * Writes {@code stream} into {@code ch} as a peer's TCP reads, cut as {@code splitSeed} chooses
     * ({@link FuzzInput#split}), each a buffer {@code alloc} tracks, and drains {@code ch} after each; stops once
     * the handler closed the connection: the peer's further octets go nowhere.
     */
    public static void feed(EmbeddedChannel ch, TrackingAllocator alloc, byte[] stream, int splitSeed) {
        for (byte[] piece : FuzzInput.split(stream, splitSeed)) {
            if (!ch.isOpen()) {
                break;
            }
            ch.writeInbound(alloc.track(alloc.heapBuffer(piece.length).writeBytes(piece)));
            drain(ch);
        }
    }

    /**
     * What every input must end with: each exception the application end saw typed, none untyped logged, every
     * buffer of {@code alloc} released.
     */
    public static void check(ApplicationEnd<?> app, TrackingAllocator alloc, List<Class<? extends Throwable>> allowed) {
        app.exceptions.forEach(t -> assertTyped(t, allowed));
        assertNoUntypedLogged(allowed);
        alloc.assertAllReleased();
    }

    /** True when {@code t} is one of {@code allowed}, or a Netty DecoderException wrapping one. */
    public static boolean isTyped(Throwable t, List<Class<? extends Throwable>> allowed) {
        for (Throwable c = t; c != null; c = c.getClass().getName().equals(NETTY_DECODER_EXCEPTION) ? c.getCause() : null) {
            for (Class<? extends Throwable> a : allowed) {
                if (a.isInstance(c)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Rethrows {@code t} (wrapped in an AssertionError naming it) unless it is typed. */
    public static void assertTyped(Throwable t, List<Class<? extends Throwable>> allowed) {
        if (t != null && !isTyped(t, allowed)) {
            throw new AssertionError("untyped exception from the code under test: " + t, t);
        }
    }

    /** Routes the project's WARN and ERROR records to the capture (and off the console). */
    public static synchronized void captureLogs() {
        Logger logger = (Logger) LoggerFactory.getLogger(PROJECT_LOGGER);
        if (logger.getAppender(Capture.NAME) == null) {
            savedLevel = logger.getLevel();
            savedAdditive = logger.isAdditive();
            CAPTURE.setContext(logger.getLoggerContext());
            CAPTURE.setName(Capture.NAME);
            CAPTURE.start();
            logger.addAppender(CAPTURE);
            logger.setLevel(Level.WARN);
            logger.setAdditive(false);
        }
        CAPTURE.drain();
    }

    /** Undoes {@link #captureLogs()}. */
    public static synchronized void restoreLogs() {
        Logger logger = (Logger) LoggerFactory.getLogger(PROJECT_LOGGER);
        if (logger.getAppender(Capture.NAME) != null) {
            logger.detachAppender(Capture.NAME);
            logger.setLevel(savedLevel);
            logger.setAdditive(savedAdditive);
        }
        CAPTURE.drain();
    }

    /**
     * Fails when a record logged since the last call carries an exception that is not typed (a
     * handler caught something unexpected and logged it); forgets the records either way.
     */
    public static void assertNoUntypedLogged(List<Class<? extends Throwable>> allowed) {
        for (ILoggingEvent e : CAPTURE.drain()) {
            IThrowableProxy p = e.getThrowableProxy();
            if (p instanceof ThrowableProxy) {
                Throwable t = ((ThrowableProxy) p).getThrowable();
                if (!isTyped(t, allowed)) {
                    throw new AssertionError("logged by " + e.getLoggerName() + ": " + e.getFormattedMessage(), t);
                }
            }
        }
    }

    private static final class Capture extends AppenderBase<ILoggingEvent> {
        static final String NAME = "iwarp-fuzz-capture";
        private final List<ILoggingEvent> records = new ArrayList<>();

        @Override
        protected synchronized void append(ILoggingEvent event) {
            if (event.getThrowableProxy() != null) {
                records.add(event);
            }
        }

        synchronized List<ILoggingEvent> drain() {
            List<ILoggingEvent> out = new ArrayList<>(records);
            records.clear();
            return out;
        }
    }
}
