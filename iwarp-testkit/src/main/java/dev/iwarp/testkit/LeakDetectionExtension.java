package dev.iwarp.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.List;

/**
 * Fails a test when Netty's {@link ResourceLeakDetector} reports a leak, and prints the test's log
 * ({@link TestLog}) only when the test fails.
 *
 * <p>Registered for every test through JUnit's extension auto-detection (see
 * {@code META-INF/services}); the build sets {@code junit.jupiter.extensions.autodetection.enabled},
 * {@code -Dio.netty.leakDetection.level=paranoid} and Netty's detector to
 * {@link RecordingLeakDetector}, whose leak listener records each leak. Netty reports a leak only
 * after the leaked buffer was garbage collected and a later allocation polls the detector's
 * reference queue, so after each test this extension forces a few GC and allocation rounds and then
 * fails the test if any leak was recorded.
 */
public final class LeakDetectionExtension implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback {
    static final String CUSTOM_DETECTOR = "io.netty.customResourceLeakDetector";

    static {
        // for runs outside the build (IDE): before Netty's buffer classes create their detectors
        if (System.getProperty(CUSTOM_DETECTOR) == null) {
            System.setProperty(CUSTOM_DETECTOR, RecordingLeakDetector.class.getName());
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        install();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        install();
        RecordingLeakDetector.drain();
        TestLog.clear();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        List<String> leaks = collectLeaks();
        if (context.getExecutionException().isPresent() || !leaks.isEmpty()) {
            TestLog.printTo(System.err, "--- log of " + context.getDisplayName() + " ---");
        }
        if (!leaks.isEmpty()) {
            throw new AssertionError("Netty reported " + leaks.size() + " buffer leak(s) during "
                    + context.getDisplayName() + ":\n" + String.join("\n----\n", leaks));
        }
    }

    /** Forces leak reporting and returns (and forgets) every leak recorded since the last call. */
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
        if (!RecordingLeakDetector.inUse()) {
            throw new IllegalStateException("leak detection is not active: Netty did not create "
                    + RecordingLeakDetector.class.getSimpleName() + " (-D" + CUSTOM_DETECTOR + "="
                    + System.getProperty(CUSTOM_DETECTOR) + ")");
        }
        return RecordingLeakDetector.drain();
    }

    private static void install() {
        if (ResourceLeakDetector.getLevel() != ResourceLeakDetector.Level.PARANOID) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        }
    }
}
