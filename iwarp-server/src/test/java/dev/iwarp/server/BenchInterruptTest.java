package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * bench cut short (SIGINT calls {@link Bench#interrupt}) ends with the figures of what completed, marked partial,
 * rather than nothing.
 */
class BenchInterruptTest {

    @Test
    void interruptedRunReportsWhatWasMeasuredMarkedPartial() throws Exception {
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()));
             IwarpStack clientStack = IwarpStack.builder().threads(1).build();
             ClientWire wire = IwarpWire.client(clientStack)) {
            // 60 s asked for; interrupted once iterations completed
            BenchSettings s = BenchSettings.of(Bench.Op.write, 4096, 1, 4).withDuration(TimeUnit.SECONDS.toNanos(60));
            try (Bench bench = Bench.connect(wire, server.localAddress(), s)) {
                CompletableFuture<BenchResult> run = CompletableFuture.supplyAsync(() -> {
                    try {
                        return bench.run(null);
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                Thread.sleep(1500); // the run is under way (warm-up off: Settings.of)
                bench.interrupt();
                BenchResult r = run.get(20, TimeUnit.SECONDS); // not the 60 s asked for
                assertTrue(bench.wasInterrupted());
                assertTrue(r.iterations() > 0, "iterations measured: " + r.iterations());
                assertTrue(r.nanos() < TimeUnit.SECONDS.toNanos(30), "ended early: " + r.nanos());
                assertEquals(String.format(java.util.Locale.ROOT,
                        "interrupted: partial results, the %d iterations completed in the first %.1f s",
                        r.iterations(), r.nanos() / 1e9), BenchReport.partialNote(r));

                StringWriter json = new StringWriter();
                BenchReport.json(new PrintWriter(json, true), r, true);
                assertTrue(json.toString().trim().endsWith(", \"partial\": true}"), json.toString());
                StringWriter whole = new StringWriter();
                BenchReport.json(new PrintWriter(whole, true), r);
                assertTrue(!whole.toString().contains("partial"), whole.toString());
            }
        }
    }

    @Test
    void interruptedInTheWarmupSaysNothingWasMeasured() throws Exception {
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()));
             IwarpStack clientStack = IwarpStack.builder().threads(1).build();
             ClientWire wire = IwarpWire.client(clientStack)) {
            // warm-up until the rate is stable, at most 60 s; Ctrl-C before it could be
            BenchSettings s = BenchSettings.of(Bench.Op.write, 4096, 1, 4).withDuration(TimeUnit.SECONDS.toNanos(60))
                    .withWarmup(BenchSettings.WARMUP_STABLE, TimeUnit.SECONDS.toNanos(60));
            try (Bench bench = Bench.connect(wire, server.localAddress(), s)) {
                bench.interrupt();
                BenchResult r = bench.run(null);
                assertTrue(bench.wasInterrupted());
                assertTrue(bench.wasInterruptedInWarmup());
                assertEquals(0, r.iterations());
                // before: "interrupted: partial results, the 0 iterations completed in the first 0.0 s" and
                // "Warm-up took    : 5.6 s, rate NOT stable (--warmup-max reached) (MB/sec per 0.5 s: ...)"
                assertEquals(String.format(java.util.Locale.ROOT, "interrupted during the warm-up (after %.1f s): "
                        + "nothing was measured", r.warmupNanos() / 1e9), BenchReport.partialNote(r, true));
                String took = BenchReport.warmupLine(r, true);
                assertTrue(took.matches("\\d+\\.\\d s, interrupted before the rate was stable \\(MB/sec per 0\\.5 s:.*"),
                        took);
            }
        }
    }
}
