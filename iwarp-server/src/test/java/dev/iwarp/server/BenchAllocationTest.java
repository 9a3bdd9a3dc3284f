package dev.iwarp.server;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.turbo.TurboFilter;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.verbs.MemoryBudget;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What {@code bench} and {@code serve} allocate per message once warm, each on the event loop thread that runs its
 * side of the connection (com.sun.management.ThreadMXBean.getThreadAllocatedBytes, as bench itself measures its
 * client): bench's client loop against serve's session, guard and logging context over loopback TCP, MPA with CRC,
 * logging set up as the packaged jar runs (serve's logback.xml and the out-of-memory filter {@code Main} adds).
 * Octets allocated are exact for a code path (unlike times): the bound holds on a loaded machine. Serve reports
 * through bench's cost question ({@link BenchCost}), here answered by its event loop thread's counter. Serve's stack
 * is built as {@code serve} builds it by default: its memory budget (Read Response copies with CRC are charged to the
 * peer, RFC 5044 §4.4) and its Read Response rate.
 */
class BenchAllocationTest {
    private static final int WARMUP_64K = 3_000;
    /**
     * Enough 64 KiB messages that a one-off growth stays within {@link #LIMIT} per message: 13-15 B per message
     * over 3,000 in a JVM that ran BenchTest first, the size of a new chunk's free lists in Netty's adaptive
     * allocator (~40 KB, made when the buffers an event loop holds outgrow its chunks).
     */
    private static final int MEASURED_64K = 20_000;
    private static final int WARMUP_SMALL = 30_000;
    private static final int MEASURED_SMALL = 30_000;
    /**
     * Octets per message a side may allocate at most: a margin for the rare object (a queue growing, a timer
     * re-armed) spread over the messages measured, far below one object per message.
     */
    private static final double LIMIT = 8.0;
    private ResourceLeakDetector.Level level;
    private LoggerContext logging;
    private List<TurboFilter> turboFilters;
    private MemoryBudget budget;
    private RpingServer server;
    private IwarpStack clientStack;

    @BeforeEach
    void start() throws Exception {
        // the paranoid leak detector records every access of a tracked buffer (a stack trace each): off while the
        // buffers of the run are made and used, so that the count is the stack's own
        level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        logging = (LoggerContext) LoggerFactory.getILoggerFactory();
        turboFilters = new ArrayList<>(logging.getTurboFilterList());
        OutOfMemoryExit oom = new OutOfMemoryExit(line -> { }, null);
        oom.start();
        TurboFilterChain.add(logging, oom); // as Main.main installs it, after logback.xml's PeerWarningLimiter
        budget = ServerMemory.budget(ServerMemory.defaultBudget(ServerMemory.maxDirectMemory()));
        server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).memoryBudget(budget)
                        .readResponseRate(ServerMemory.DEFAULT_READ_RATE).build()));
        clientStack = IwarpStack.builder().threads(1).build();
    }

    @AfterEach
    void stop() {
        try {
            clientStack.close();
            server.close();
        } finally {
            logging.getTurboFilterList().clear(); // not stopped: the limiter stays in use
            logging.getTurboFilterList().addAll(turboFilters);
            ResourceLeakDetector.setLevel(level);
        }
    }

    @Test
    void writesOf64KiBAllocateNothingPerMessage() throws Exception {
        double[] perMessage = perMessage(Bench.Op.write, 64 * 1024, 16, WARMUP_64K, MEASURED_64K);
        assertTrue(perMessage[0] <= LIMIT, perMessage[0] + " octets allocated by bench per 64 KiB Write");
        assertTrue(perMessage[1] <= LIMIT, perMessage[1] + " octets allocated by serve per 64 KiB Write");
    }

    @Test
    void writesOf1KiBOneInEightSignaledAllocateNothingPerMessage() throws Exception {
        // --cq-mod 8: signaled and unsignaled requests alternate, each kind posted again without a new object
        double[] perMessage = perMessage(Bench.Op.write, 1024, 16, WARMUP_SMALL, MEASURED_SMALL, 8);
        assertTrue(perMessage[0] <= LIMIT, perMessage[0] + " octets allocated by bench per 1 KiB Write");
        assertTrue(perMessage[1] <= LIMIT, perMessage[1] + " octets allocated by serve per 1 KiB Write");
    }

    @Test
    void readsOf64KiBAllocateNothingPerMessage() throws Exception {
        double[] perMessage = perMessage(Bench.Op.read, 64 * 1024, 16, WARMUP_64K, MEASURED_64K);
        assertTrue(perMessage[0] <= LIMIT, perMessage[0] + " octets allocated by bench per 64 KiB Read");
        // each segment's payload is copied (CRC on) and the copy charged to bench's account until its last release;
        // serve's Read Response rate (1 GiB/s) binds here: its resume timer, at most 1,000 a second, is ~5 B per
        // message (one per segment before, 21-34 B)
        assertTrue(perMessage[1] <= LIMIT, perMessage[1] + " octets allocated by serve per 64 KiB Read");
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (budget.committed() != 0) { // serve closes its side after bench closed its connection
            assertTrue(System.nanoTime() < deadline, "not given back within 60 s: " + budget);
            Thread.sleep(5);
        }
    }

    @Test
    void pipelinedSendsOf64OctetsAllocateNothingPerMessage() throws Exception {
        double[] perMessage = perMessage(Bench.Op.send, 64, 64, WARMUP_SMALL, MEASURED_SMALL);
        assertTrue(perMessage[0] <= LIMIT, perMessage[0] + " octets allocated by bench per 64 B Send echoed");
        assertTrue(perMessage[1] <= LIMIT, perMessage[1] + " octets allocated by serve per 64 B Send echoed");
    }

    /** {bench's, serve's} octets allocated per message on their event loop threads, CRC on. */
    private double[] perMessage(Bench.Op op, int size, int depth, int warmup, int measured) throws Exception {
        return perMessage(op, size, depth, warmup, measured, 1);
    }

    /** As above, one main request in {@code cqMod} signaled. */
    private double[] perMessage(Bench.Op op, int size, int depth, int warmup, int measured, int cqMod)
            throws Exception {
        BenchSettings s = BenchSettings.of(op, size, measured, depth).withCrc(true, 60_000).withWarmup(warmup, 0)
                .withCqMod(cqMod);
        try (Bench bench = Bench.connect(IwarpWire.client(clientStack), server.localAddress(), s)) {
            long serveThread = serveSession().connection().channel().eventLoop()
                    .submit(() -> Thread.currentThread().getId()).get();
            BenchResult r = bench.run(null, () -> new BenchCost.Snapshot(0, allocatedBytes(serveThread)));
            assertEquals(measured, r.iterations());
            double client = r.allocatedPerMessage();
            double serve = (double) r.server().allocatedBytes() / r.iterations();
            System.out.printf("BenchAllocationTest: %s %d B depth %d: bench %.1f B, serve %.1f B per message%n", op,
                    size, depth, client, serve);
            return new double[] {client, serve};
        }
    }

    /** The session of bench's connection, once it started (its accept may reach bench first). */
    private RpingSession serveSession() throws InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        RpingSession s;
        while ((s = server.lastSession()) == null || s.connection() == null) {
            assertTrue(System.nanoTime() < deadline, "no session started within 60 s");
            Thread.sleep(5);
        }
        return s;
    }

    private static long allocatedBytes(long threadId) {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getThreadAllocatedBytes(threadId);
    }
}
