package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.ClientWire;
import io.netty.util.ResourceLeakDetector;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** {@code bench HOST[:PORT]}: throughput, latency and cost of Writes, Reads or echoed Sends against {@code serve}. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "RDMA Write/Read to serve's advertised target region, or Sends it echoes, posted from completion "
                + "callbacks like perftest; prints perftest's columns, latency percentiles and the client's CPU and "
                + "allocation per message. Netty's sampled leak detection is off while it measures, unless the "
                + "system property io.netty.leakDetection.level is set.")
final class BenchCommand implements Callable<Integer> {
    /** Exit code of a run cut short by SIGINT, as a shell reports a process SIGINT ended (128 + 2). */
    static final int EXIT_INTERRUPTED = 130;
    static final int MAX_DEPTH = 1024;
    static final int MAX_CONNECTIONS = 10_000;

    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "HOST[:PORT]", description = "Server (default port 7174, --wire vitcp 7175, --wire ift 7176).")
    String target;

    @Mixin
    WireOptions wire = new WireOptions();

    @Mixin
    ToolLogging log = new ToolLogging();

    @Mixin
    TlsOptions tls = new TlsOptions();

    @Mixin
    TransportOption transport = new TransportOption();

    @Option(names = "--op", description = "write, read or send (default: ${DEFAULT-VALUE}).")
    Bench.Op op = Bench.Op.write;

    @Option(names = "--size", description = "Octets per message, 1..1073741824; send: 1..65536, not 16 (default: ${DEFAULT-VALUE}).")
    int size = 65536;

    @Option(names = "--iterations", description = "Measured messages per connection, >= 1 (default: ${DEFAULT-VALUE}).")
    long iterations = 10_000;

    @Option(names = "--duration", paramLabel = "SECONDS", description = "Measure this long (> 0) instead of --iterations.")
    Double durationSec;

    @Option(names = "--depth", description = "Messages in flight per connection, 1..1024; read: at most the ORD, "
            + "send: at most the receives serve posts (default: ${DEFAULT-VALUE}).")
    int depth = 16;

    @Option(names = "--cq-mod", paramLabel = "N", description = "Post one Write, Read or Send in N signaled, the "
            + "others without a completion (perftest's --cq-mod, selective signaling): the client's work per message "
            + "drops, and only the signaled ones have a latency. 1..1024, at most --depth; 1 with --verify or a wire "
            + "that reports every completion (VI/TCP) (default: ${DEFAULT-VALUE}).")
    int cqMod = 1;

    @Option(names = "--warmup", paramLabel = "stable|N|Ns", description = "Warm-up before measuring, not in the "
            + "figures: 'stable' runs until the rate holds (three 0.5 s windows within 10 %% of each other) and the "
            + "JIT compiler is quiet (under 5 %% of the last window), at most --warmup-max; N messages per connection, or N seconds with an 's' (e.g. 2s); 0 = none "
            + "(default: ${DEFAULT-VALUE}).")
    String warmup = "stable";

    @Option(names = "--warmup-max", paramLabel = "SECONDS", description = "Longest --warmup stable, 1..3600 "
            + "(default: ${DEFAULT-VALUE}).")
    double warmupMaxSec = 10;

    @Option(names = "--no-server-cost", description = "Do not ask serve for its process's CPU and allocation "
            + "before and after the measured phase (by default bench asks, on one short connection each time).")
    boolean noServerCost;

    @Option(names = "--crc", description = "Ask for MPA CRC (C=1); VI/TCP: send the CRC option; IFT: see --ift-send-crc.")
    boolean crc;

    @Option(names = "--connections", description = "Connections run at once, each with --iterations, 1..10000 (default: ${DEFAULT-VALUE}).")
    int connections = 1;

    @Option(names = "--verify", description = "Check every octet: each Write read back, each Read of data written "
            + "first, each echo; exit 1 at the first mismatch. Figures then include the check traffic.")
    boolean verify;

    @Option(names = "--output", paramLabel = "FORMAT", description = "text, json or csv (json/csv: one record on stdout, "
            + "the header on stderr) (default: ${DEFAULT-VALUE}).")
    String output = "text";

    @Option(names = "--hist", paramLabel = "FILE", description = "Also write the latency distribution (usec) to "
            + "FILE in HdrHistogram's percentile format, as its plotter (HistogramLogAnalyzer, hdrhistogram.github.io) reads it.")
    java.nio.file.Path histFile;

    @Option(names = "--timeout", paramLabel = "MS", description = "Give up when no message completes for this long, "
            + "1..3600000 (default: ${DEFAULT-VALUE}).")
    long timeoutMs = 10_000;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        wire.check();
        transport.check(wire);
        wire.tool().checkBench(crc);
        BenchSettings s = settings(); // IllegalArgumentException: one line, exit 2
        if (histFile != null) { // before the run, not after it has been measured
            CommandLineChecks.outputFile("--hist", histFile);
        }
        if (System.getProperty("io.netty.leakDetection.level") == null
                && System.getProperty("io.netty.leakDetectionLevel") == null) {
            // each sampled buffer records stack traces: 30-40 % of what the client allocated per 64 KiB Read,
            // a debugging aid's cost, not the stack's (compare turns it off for both sides too)
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        }
        BenchReport.Format format = BenchReport.Format.valueOf(output.toLowerCase(Locale.ROOT));
        InetSocketAddress server = PingCommand.parse(target, wire.defaultPort());
        int threads = Math.min(connections, 2);
        try (IwarpStack stack = wire.tool().stack(transport.apply(IwarpStack.builder()).threads(threads));
             ClientWire client = tls.clientWire(wire, stack, threads);
             Bench bench = Bench.connect(client, server, s)) {
            BenchReport.header(format == BenchReport.Format.text ? out : err, s, bench.summary(), bench.parameters(),
                    bench.depth(), bench.signalEvery());
            // SIGINT (Ctrl-C): stop posting, let what is in flight complete, print what was measured, marked partial
            java.util.concurrent.CountDownLatch reported = new java.util.concurrent.CountDownLatch(1);
            Thread onSignal = new Thread(() -> {
                bench.interrupt();
                try {
                    reported.await(s.timeoutMs() + 2_000, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "bench-interrupt");
            Runtime.getRuntime().addShutdownHook(onSignal);
            try {
                java.util.function.Supplier<BenchCost.Snapshot> cost = !noServerCost
                        ? () -> BenchCost.ask(client, server, s.crc(), Math.min(s.timeoutMs(), 5_000)) : null;
                BenchResult r = bench.run(err, cost);
                boolean partial = bench.wasInterrupted();
                if (histFile != null) {
                    BenchReport.histogram(histFile, r);
                }
                switch (format) {
                    case json -> BenchReport.json(out, r, partial);
                    case csv -> BenchReport.csv(out, r, partial);
                    default -> {
                        if (partial) {
                            out.println(BenchReport.partialNote(r, bench.wasInterruptedInWarmup()));
                        }
                        BenchReport.text(out, r, bench.wasInterruptedInWarmup());
                    }
                }
                out.flush();
                return partial ? EXIT_INTERRUPTED : 0;
            } finally {
                reported.countDown();
                try {
                    Runtime.getRuntime().removeShutdownHook(onSignal);
                } catch (IllegalStateException shuttingDown) {
                    // the hook is running: it returns now that the summary is out
                }
            }
        } catch (IOException e) {
            err.println("bench: " + e.getMessage());
            return 1;
        }
    }

    /** The options as settings; an {@link IllegalArgumentException} names the first bad one and its range. */
    BenchSettings settings() {
        int maxSize = op == Bench.Op.send ? RpingSession.BUFFER_SIZE : 1 << 30;
        check(size >= 1 && size <= maxSize, "--size must be 1.." + maxSize + (op == Bench.Op.send ? " for send" : ""), size);
        if (op == Bench.Op.send && size == Advertisement.LENGTH) {
            throw new IllegalArgumentException("--size 16 is an rping advertisement to serve; use another size for send");
        }
        check(iterations >= 1, "--iterations must be >= 1", iterations);
        check(durationSec == null || durationSec > 0 && durationSec <= 1e6, "--duration must be > 0 and <= 1000000 s",
                durationSec);
        check(depth >= 1 && depth <= MAX_DEPTH, "--depth must be 1.." + MAX_DEPTH, depth);
        check(connections >= 1 && connections <= MAX_CONNECTIONS, "--connections must be 1.." + MAX_CONNECTIONS,
                connections);
        check(cqMod >= 1 && cqMod <= MAX_DEPTH, "--cq-mod must be 1.." + MAX_DEPTH, cqMod);
        check(timeoutMs >= 1 && timeoutMs <= 3_600_000, "--timeout must be 1..3600000 ms", timeoutMs);
        check(output.matches("(?i)text|json|csv"), "--output must be text, json or csv", output);
        long warmupIterations = 0;
        long warmupNanos = 0;
        String w = warmup.trim().toLowerCase(Locale.ROOT);
        check(warmupMaxSec >= 1 && warmupMaxSec <= 3600, "--warmup-max must be 1..3600 s", warmupMaxSec);
        try {
            if (w.equals("stable")) {
                warmupIterations = BenchSettings.WARMUP_STABLE;
                warmupNanos = (long) (warmupMaxSec * 1e9);
            } else if (w.endsWith("s")) {
                double sec = Double.parseDouble(w.substring(0, w.length() - 1));
                check(sec >= 0 && sec <= 3600, "--warmup must be 0..3600 s or a count >= 0", warmup);
                warmupNanos = (long) (sec * 1e9);
            } else {
                warmupIterations = Long.parseLong(w);
                check(warmupIterations >= 0, "--warmup must be 0..3600 s or a count >= 0", warmup);
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--warmup must be stable, a count (1000) or seconds (2s): " + warmup);
        }
        long durationNanos = durationSec == null ? 0 : (long) (durationSec * TimeUnit.SECONDS.toNanos(1));
        return new BenchSettings(op, size, iterations, durationNanos, depth, crc, connections, warmupIterations,
                warmupNanos, verify, timeoutMs, -1, cqMod);
    }

    private static void check(boolean ok, String rule, Object value) {
        if (!ok) {
            throw new IllegalArgumentException(rule + ": " + value);
        }
    }
}
