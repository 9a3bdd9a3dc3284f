package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.IwarpWire;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How {@code bench}'s phases follow one another: a timed warm-up hands what it has in flight to the measured phase
 * (the loops run on as they ran), and every connection an event loop serves gets its share of that loop in both.
 */
@Timeout(60) // a connection starved of its event loop stalls a run instead of failing it
class BenchPhaseTest {
    private static final int SIZE = 2048;

    private RpingServer server;
    private IwarpStack clientStack;

    @BeforeEach
    void start() throws Exception {
        server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(64 * 1024)
                .withSharedTarget(true), ServeOptions.on(IwarpStack.builder().threads(1).build()));
        clientStack = IwarpStack.builder().threads(1).build(); // one event loop for every connection
    }

    @AfterEach
    void stop() {
        clientStack.close();
        server.close();
    }

    @Test
    void connectionsSharingAnEventLoopAreEachServedInBothPhases() throws Exception {
        // a Write completes inside its post when the transmit flushes it at once: without a bound on what one
        // call posts, the first connection's posting ran the whole phase and the second one's never began
        BenchSettings s = BenchSettings.of(Bench.Op.write, SIZE, 0, 4).withConnections(2)
                .withWarmup(0, TimeUnit.MILLISECONDS.toNanos(300)).withDuration(TimeUnit.MILLISECONDS.toNanos(500));
        try (Bench b = Bench.connect(IwarpWire.client(clientStack), server.localAddress(), s)) {
            BenchResult r = b.run(null);
            long measured = 0;
            for (BenchConnection c : b.connections()) {
                long its = c.measuredOctets() / SIZE;
                assertTrue(its > 0, "a connection completed no measured iteration");
                assertTrue(c.completedIterations() > its, "a connection completed no warm-up iteration");
                measured += its;
            }
            assertEquals(r.iterations(), measured);
        }
    }

    @Test
    void aTimedWarmupHandsOverAndTheMeasuredCountsStayExact() throws Exception {
        BenchSettings s = BenchSettings.of(Bench.Op.write, SIZE, 300, 8)
                .withWarmup(0, TimeUnit.MILLISECONDS.toNanos(200));
        try (Bench b = Bench.connect(IwarpWire.client(clientStack), server.localAddress(), s)) {
            BenchResult r = b.run(null);
            // the iterations in flight when measuring began count for the measured phase, once each, with their
            // latency (the loop's histogram was reset as the phase began on it)
            assertEquals(300, r.iterations());
            assertEquals(300L * SIZE, r.bytes());
            assertEquals(300, r.latency().getTotalCount());
            BenchConnection c = b.connections().get(0);
            assertTrue(c.completedIterations() > 300, "the warm-up completed iterations too");
        }
    }
}
