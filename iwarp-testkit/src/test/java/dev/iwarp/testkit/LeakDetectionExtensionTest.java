package dev.iwarp.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Proves that Netty's leak reports reach {@link LeakDetectionExtension} through its leak listener
 * ({@link RecordingLeakDetector}), with nothing logged. Each test leaks on purpose
 * and then drains the report itself, so the auto-registered extension finds nothing afterwards.
 */
class LeakDetectionExtensionTest {

    /** Allocates a pooled buffer and drops it unreleased; the hint makes its leak record recognisable. */
    private static void leak(String hint) {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.heapBuffer(64);
        buf.writeLong(42);
        buf.touch(hint);
    }

    /** Calls collectLeaks until the report shows up (GC timing varies); returns the records. */
    private static List<String> collectUntilReported(String hint) {
        for (int attempt = 0; attempt < 20; attempt++) {
            List<String> leaks = LeakDetectionExtension.collectLeaks();
            if (leaks.stream().anyMatch(l -> l.contains(hint))) {
                return leaks;
            }
        }
        return List.of();
    }

    @Test
    void collectLeaksReturnsTheRecordOfABufferDroppedWithoutRelease() {
        String hint = "deliberate-leak-" + UUID.randomUUID(); // unique: Netty reports identical records once only
        leak(hint);
        List<String> leaks = collectUntilReported(hint);
        assertFalse(leaks.isEmpty(), "no leak reported");
        assertTrue(TestLog.messages(ch.qos.logback.classic.Level.TRACE).stream().noneMatch(m -> m.contains(hint)),
                "the leak reached the listener, not the log");
        assertTrue(leaks.stream().anyMatch(l -> l.contains("LEAK") && l.contains(hint)), String.join("\n", leaks));
        assertTrue(LeakDetectionExtension.collectLeaks().isEmpty(), "collectLeaks drains the records");
    }

    @Test
    void afterEachFailsTheTestOnALeak() {
        ExtensionContext context = (ExtensionContext) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {ExtensionContext.class},
                (proxy, method, args) -> method.getName().equals("getDisplayName") ? "a leaking test"
                        : method.getName().equals("getExecutionException") ? java.util.Optional.empty() : null);
        LeakDetectionExtension extension = new LeakDetectionExtension();
        assertDoesNotThrow(() -> extension.afterEach(context), "nothing leaked yet");

        String hint = "deliberate-leak-" + UUID.randomUUID();
        leak(hint);
        AssertionError failure = null;
        for (int attempt = 0; attempt < 20 && failure == null; attempt++) {
            try {
                extension.afterEach(context);
            } catch (AssertionError e) {
                failure = e;
            }
        }
        assertTrue(failure != null, "afterEach did not fail");
        assertTrue(failure.getMessage().contains("a leaking test") && failure.getMessage().contains(hint),
                failure.getMessage());
    }
}
