package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.verbs.PeerActivity;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench --cq-mod}: one main request in N signaled, the others completed by the signaled one after them
 * (a send queue completes in posting order), counted all the same; only the signaled ones have a latency.
 */
class BenchCqModTest {
    private RpingServer server;
    private IwarpStack clientStack;

    @BeforeEach
    void start() throws Exception {
        server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(64 * 1024),
                ServeOptions.on(IwarpStack.builder().threads(1).build()));
        clientStack = IwarpStack.builder().threads(1).build();
    }

    @AfterEach
    void stop() {
        clientStack.close();
        server.close();
    }

    private BenchResult run(BenchSettings s) throws Exception {
        try (Bench b = Bench.connect(IwarpWire.client(clientStack), server.localAddress(), s)) {
            assertEquals(s.verify() ? 1 : Math.min(s.cqMod(), b.depth()), b.signalEvery());
            return b.run(null);
        }
    }

    @ParameterizedTest
    @CsvSource({"write, 4, 16", "write, 16, 16", "write, 7, 16", "read, 4, 8", "read, 64, 8"})
    void everyIterationIsCountedAndTheServerSawThemAll(Bench.Op op, int cqMod, int depth) throws Exception {
        BenchResult r = run(BenchSettings.of(op, 1024, 1_000, depth).withCqMod(cqMod).withCrc(true, 10_000));
        assertEquals(1_000, r.iterations());
        assertEquals(1_000L * 1024, r.bytes());
        long timed = r.latency().getTotalCount();
        int every = Math.min(cqMod, depth);
        // every N-th and the last of each burst: at least 1,000 / N, and fewer than all when N > 1
        assertTrue(timed >= 1_000 / every && timed < 1_000, timed + " latencies for 1,000 iterations, 1 in " + every);
        PeerActivity seen = serveSaw(op == Bench.Op.write ? PeerActivity::writes : PeerActivity::readsAnswered);
        assertEquals(1_000, op == Bench.Op.write ? seen.writes() : seen.readsAnswered(), seen::toString);
        assertEquals(1_000L * 1024, op == Bench.Op.write ? seen.writeOctets() : seen.readOctets(), seen::toString);
    }

    /** What serve's end of the connection saw, read on its event loop, once {@code count} reached 1,000. */
    private PeerActivity serveSaw(java.util.function.ToLongFunction<PeerActivity> count) throws Exception {
        IwarpWire.Connection c = (IwarpWire.Connection) server.lastSession().connection();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (true) {
            PeerActivity a = c.channel().eventLoop().submit(() -> c.queuePair().peerActivity()).get();
            if (count.applyAsLong(a) >= 1_000 || System.nanoTime() > deadline) {
                return a;
            }
            Thread.sleep(5);
        }
    }

    @Test
    void pipelinedSendsAreAllEchoed() throws Exception {
        BenchResult r = run(BenchSettings.of(Bench.Op.send, 64, 2_000, 16).withCqMod(8).withCrc(true, 10_000));
        assertEquals(2_000, r.iterations());
        // a Send's latency runs to its echo: every iteration has one, signaled or not
        assertEquals(2_000, r.latency().getTotalCount());
        assertTrue(server.lastSession().awaitCounts(0, 0, 2_001, 10_000), "2,000 Sends and the hello");
    }

    @Test
    void aTimedPhaseEndsWithWhatWasPosted() throws Exception {
        // stopped at any post: the last of each burst is signaled, so nothing waits for a completion that never comes
        BenchResult r = run(BenchSettings.of(Bench.Op.write, 1024, 0, 16).withDuration(300_000_000L).withCqMod(16)
                .withCrc(false, 2_000));
        assertTrue(r.iterations() > 0, "iterations " + r.iterations());
        assertEquals(r.iterations() * 1024, r.bytes());
    }

    @Test
    void verifyCountsEveryIterationSignaled() throws Exception {
        BenchResult r = run(BenchSettings.of(Bench.Op.write, 1024, 200, 8).withVerify(true, -1).withCqMod(8)
                .withCrc(true, 10_000));
        assertEquals(200, r.iterations());
        assertEquals(200, r.latency().getTotalCount(), "each checked iteration has its latency");
        assertEquals(200L * 1024, r.verifiedOctets());
    }
}
