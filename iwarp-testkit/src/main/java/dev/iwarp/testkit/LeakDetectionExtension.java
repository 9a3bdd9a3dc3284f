package dev.iwarp.testkit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Fails a test when Netty's {@link ResourceLeakDetector} reports a leak.
 *
 * <p>Registered for every test through JUnit's extension auto-detection (see
 * {@code META-INF/services}); the build sets {@code junit.jupiter.extensions.autodetection.enabled}
 * and {@code -Dio.netty.leakDetection.level=paranoid}. Netty reports a leak only after the leaked
 * buffer was garbage collected and a later allocation polls the detector's reference queue, so after
 * each test this extension forces a few GC and allocation rounds and then fails the test if any
 * {@code LEAK:} record was logged.
 */
public final class LeakDetectionExtension implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback {

    private static final String NETTY_LEAK_LOGGER = ResourceLeakDetector.class.getName();
    private static final LeakCapture CAPTURE = new LeakCapture();

    @Override
    public void beforeAll(ExtensionContext context) {
        install();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        install();
        CAPTURE.drain();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        List<String> leaks = collectLeaks();
        if (!leaks.isEmpty()) {
            throw new AssertionError("Netty reported " + leaks.size() + " buffer leak(s) during "
                    + context.getDisplayName() + ":\n" + String.join("\n----\n", leaks));
        }
    }

    /** Forces leak reporting and returns (and forgets) every leak record logged since the last call. */
    public static List<String> collectLeaks() {
        install();
        for (int round = 0; round < 3; round++) {
            System.gc();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            // Each tracked allocation polls the detector's reference queue (paranoid level tracks all).
            for (int i = 0; i < 4; i++) {
                ByteBuf a = PooledByteBufAllocator.DEFAULT.directBuffer(8);
                a.release();
                ByteBuf b = PooledByteBufAllocator.DEFAULT.heapBuffer(8);
                b.release();
                ByteBuf c = UnpooledByteBufAllocator.DEFAULT.heapBuffer(8);
                c.release();
            }
        }
        return CAPTURE.drain();
    }

    private static synchronized void install() {
        if (ResourceLeakDetector.getLevel() != ResourceLeakDetector.Level.PARANOID) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        }
        if (!(LoggerFactory.getILoggerFactory() instanceof ch.qos.logback.classic.LoggerContext)) {
            throw new IllegalStateException("LeakDetectionExtension needs Logback as the SLF4J backend");
        }
        Logger logger = (Logger) LoggerFactory.getLogger(NETTY_LEAK_LOGGER);
        if (logger.getAppender(LeakCapture.NAME) == null) {
            CAPTURE.setContext(logger.getLoggerContext());
            CAPTURE.setName(LeakCapture.NAME);
            CAPTURE.start();
            logger.addAppender(CAPTURE);
        }
        if (logger.getLevel() == null || !logger.isErrorEnabled()) {
            logger.setLevel(Level.ERROR);
        }
    }

    private static final class LeakCapture extends AppenderBase<ILoggingEvent> {
        static final String NAME = "iwarp-leak-capture";
        private final List<String> records = new ArrayList<>();

        @Override
        protected synchronized void append(ILoggingEvent event) {
            String msg = event.getFormattedMessage();
            if (event.getLevel().isGreaterOrEqual(Level.ERROR) && msg != null && msg.contains("LEAK")) {
                records.add(msg);
            }
        }

        synchronized List<String> drain() {
            List<String> out = new ArrayList<>(records);
            records.clear();
            return out;
        }
    }
}
