package dev.iwarp.benchmarks;

import io.netty.util.concurrent.FastThreadLocalThread;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The one-thread stack benchmark measures what it says: each invocation completes {@value StackMessageBenchmark#WRITES}
 * Writes, and with {@code sendAndPlace} their octets are in the Responder's region.
 */
class StackMessageBenchmarkTest {
    @Test
    void everyInvocationCompletesItsWritesAndPlacesThem() throws Exception {
        List<Throwable> thrown = new ArrayList<>();
        Thread t = new FastThreadLocalThread(() -> {
            try {
                run(true);
                run(false);
            } catch (Throwable e) {
                thrown.add(e);
            }
        });
        t.start();
        t.join();
        assertNull(thrown.isEmpty() ? null : thrown.get(0));
    }

    private static void run(boolean crc) {
        StackMessageBenchmark b = new StackMessageBenchmark();
        b.size = 1024;
        b.crc = crc;
        b.setUp();
        try {
            b.send();
            assertEquals(StackMessageBenchmark.WRITES, b.completed);
            for (int i = 0; i < b.size; i++) {
                assertEquals(0, b.serverMemory.getByte(i), "send() leaves the Responder's region untouched");
            }
            b.sendAndPlace();
            assertEquals(2L * StackMessageBenchmark.WRITES, b.completed);
            assertEquals(0, b.failed);
            for (int i = 0; i < b.size; i++) {
                assertEquals((byte) (StackMessageBenchmark.PATTERN + i), b.serverMemory.getByte(i), "octet " + i);
            }
        } finally {
            b.tearDown();
        }
    }
}
