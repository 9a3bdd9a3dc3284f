package dev.iwarp.server;

import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The per-source count is changed only under the map's lock: a connection admitted while another from the same source
 * leaves (and its count drops to zero and is removed) must not count into a removed entry, which let two connections
 * past {@code --max-per-source 1}.
 */
class ConnectionGuardRaceTest {
    @Test
    void admissionAndLeavingRaceNeverExceedTheLimit() throws Exception {
        ConnectionGuard guard = new ConnectionGuard(new ServerLimits(0, 1, 0, 0), 0,
                new AggregatedLog(LoggerFactory.getLogger(ConnectionGuardRaceTest.class), 10, TimeUnit.SECONDS));
        InetAddress source = InetAddress.getByName("127.0.0.9");
        AtomicInteger held = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        int threads = 4;
        CountDownLatch done = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            new Thread(() -> {
                for (int i = 0; i < 300_000; i++) {
                    if (guard.admit(source) == null) {
                        most.accumulateAndGet(held.incrementAndGet(), Math::max);
                        held.decrementAndGet();
                        guard.leave(source);
                    }
                }
                done.countDown();
            }).start();
        }
        assertTrue(done.await(120, TimeUnit.SECONDS));
        assertEquals(1, most.get(), "connections admitted at once from one source with --max-per-source 1");
        assertNull(guard.admit(source), "the count is back to zero: one more is admitted");
    }
}
