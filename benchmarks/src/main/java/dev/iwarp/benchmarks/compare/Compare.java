package dev.iwarp.benchmarks.compare;

import dev.iwarp.benchmarks.compare.process.RawRead;
import dev.iwarp.bootstrap.Transport;
import io.netty.util.ResourceLeakDetector;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.Function;

/**
 * Our stack against an equivalent raw Netty program, in one JVM, interleaved (ours, raw, ours, raw
 * ...), medians over rounds. Per round and as medians: goodput or rate, the ratio ours/raw, CPU µs per
 * message of each side's event loop and octets allocated per message on it (both from the JVM's
 * per-thread counters, so they exclude the measuring thread).
 */
@Command(name = "compare", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Runs our iWARP stack and an equivalent raw Netty program side by side on loopback "
                + "and prints goodput or rate, the ratio, CPU and allocation per message per side.")
public final class Compare implements Callable<Integer> {
    @Option(names = "--rounds", description = "Rounds per case (each: ours, then raw). Default ${DEFAULT-VALUE}.")
    int rounds = 3;
    @Option(names = "--seconds", description = "Measured seconds per run. Default ${DEFAULT-VALUE}.")
    double seconds = 2;
    @Option(names = "--warmup", description = "Seconds of traffic before measuring, per run. Default ${DEFAULT-VALUE}.")
    double warmup = 1;
    @Option(names = "--process-warmup", paramLabel = "stable|SECONDS", description = "--processes only: each "
            + "process's warm-up before measuring: 'stable' runs until the rate holds (three 0.5 s windows within 10 %% "
            + "of each other) and the JIT compiler is quiet, at most --warmup-max s, the rule bench applies on its own; "
            + "or seconds. A JVM started for one run is still compiling for seconds. Default ${DEFAULT-VALUE}.")
    String processWarmup = "stable";
    @Option(names = "--warmup-max", paramLabel = "SECONDS", description = "Longest 'stable' warm-up per process. "
            + "Default ${DEFAULT-VALUE}.")
    double warmupMax = 20;
    @Option(names = "--transport", split = ",", description = "epoll, nio or both (default: both; epoll only where available).")
    List<String> transports = List.of();
    @Option(names = "--case", split = ",", description = "Only cases whose name contains one of these, e.g. write-64k,pingpong.")
    List<String> only = List.of();
    @Option(names = "--smoke", description = "A short run for CI: 1 round of 0.2 s warm-up (--processes: a stable "
            + "warm-up of at most 1 s) and 0.3 s, every case.")
    boolean smoke;
    @Option(names = "--json", description = "Print one JSON document instead of text.")
    boolean json;
    @Option(names = "--json-out", paramLabel = "FILE", description = "Also write the JSON document to FILE.")
    Path jsonOut;
    @Option(names = "--processes", description = "Every side its own JVM, as users run it: a bench process against "
            + "a serve process (--serve-jar) and a raw Netty client process against a raw Netty server process; CPU "
            + "and allocation per message per process.")
    boolean processes;
    @Option(names = "--connections", split = ",", paramLabel = "N", description = "--processes only: run every case "
            + "on each of these connection counts, both sides (bench --connections N; the raw client's N connections "
            + "on as many event loops as bench's), e.g. 1,16,256; a case at N > 1 is named with -cN. Rates are "
            + "aggregates, CPU and allocation per message over all connections' messages. Default: 1.")
    List<Integer> connections = List.of(1);
    @Option(names = "--cq-mod", paramLabel = "N", description = "--processes only: bench's --cq-mod, one Write, "
            + "Read or Send in N signaled (perftest's selective signaling; the raw client has no completions at "
            + "all). Default ${DEFAULT-VALUE}: every one.")
    int cqMod = 1;
    @Option(names = "--serve-jar", paramLabel = "FILE", description = "The packaged server for --processes "
            + "(default: ${DEFAULT-VALUE}).")
    Path serveJar = Path.of("iwarp-server/target/iwarp-server.jar");
    @Option(names = "--tls-provider", paramLabel = "OPENSSL|JDK|BCJSSE", description = "The TLS implementation "
            + "of the TLS cases, ours and raw alike (default: the stack's default, OPENSSL where Netty's OpenSSL "
            + "binding loads, else JDK).")
    dev.iwarp.bootstrap.tls.TlsProvider tlsProvider;
    /** {@link #tlsProvider}, for {@link RawTls} (and so {@link OursRun}) to read when first used. */
    static volatile dev.iwarp.bootstrap.tls.TlsProvider tlsProviderChosen;
    @Option(names = "--raw-read", paramLabel = "request-response|stream", description = "The raw Netty program of "
            + "the Read cases: 'request-response' (the default: 28-octet requests, at most the case's ORD outstanding, "
            + "each answered with the octets it names, as RDMA Reads are) or 'stream' (bulk writes while writable, "
            + "no round trip: the Write cases' program).")
    String rawRead = RawRead.Mode.REQUEST_RESPONSE.cliName();
    @Option(names = "--ours-water-marks", paramLabel = "default|raw", description = "Write-buffer water marks of "
            + "our stack's connections (one-JVM mode): 'default' (the stack's defaults, as a user gets them) or 'raw' "
            + "(the raw writer's: high mark depth x size, at least 1 MiB), to tell buffering from the stack's cost.")
    String oursWaterMarks = "default";
    @Option(names = "--html", paramLabel = "FILE", description = "Also write FILE: one self-contained HTML page "
            + "(inline SVG, nothing fetched) with bar charts of ours and raw per transport and latency percentile plots.")
    Path htmlOut;

    /** The latency histogram of the last {@link #run}, for {@code --html}. */
    private Histogram lastLatency = new Histogram(3);

    private final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    public static void main(String[] args) {
        System.exit(new CommandLine(new Compare()).execute(args));
    }

    /** One run of one side: figures per message over the measured interval. */
    record Sample(double rate, double gbits, double p50us, double p99us, double cpuClientUs, double cpuServerUs,
                  double allocClient, double allocServer, String error) {
    }

    @Override
    public Integer call() throws Exception {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        threads.setThreadAllocatedMemoryEnabled(true);
        threads.setThreadCpuTimeEnabled(true);
        if (smoke) {
            rounds = 1;
            seconds = 0.3;
            warmup = 0.2;
            warmupMax = Math.min(warmupMax, 1); // --processes: the stable rule still runs, on a short leash
        }
        List<Transport> ts = new ArrayList<>();
        for (String t : transports.isEmpty() ? List.of("epoll", "nio") : transports) {
            Transport tr = Transport.parse(t);
            if (tr.unavailableReason() != null) {
                if (transports.isEmpty() && tr == Transport.EPOLL) {
                    continue; // the default list: epoll only where it loads
                }
                System.err.println("compare: " + tr.unavailableReason());
                return 1;
            }
            ts.add(tr);
        }
        if (tlsProvider != null) {
            if (!tlsProvider.isAvailable()) {
                System.err.println("compare: TLS provider " + tlsProvider + " is not available here");
                return 1;
            }
            tlsProviderChosen = tlsProvider;
        }
        try {
            rawReadMode = RawRead.Mode.parse(rawRead);
        } catch (IllegalArgumentException e) {
            System.err.println("compare: " + e.getMessage());
            return 2;
        }
        if (!oursWaterMarks.equals("default") && !oursWaterMarks.equals("raw")) {
            System.err.println("compare: --ours-water-marks must be default or raw: " + oursWaterMarks);
            return 2;
        }
        PrintStream out = System.out;
        if (connections.stream().anyMatch(n -> n < 1 || n > ProcessCompare.MAX_CONNECTIONS)) {
            System.err.println("compare: --connections must be 1.." + ProcessCompare.MAX_CONNECTIONS);
            return 2;
        }
        if (!processes && !connections.equals(List.of(1))) {
            System.err.println("compare: --connections is for --processes (the one-JVM mode runs one connection)");
            return 2;
        }
        if (processes && oursWaterMarks.equals("raw")) {
            System.err.println("compare: --ours-water-marks raw is for the one-JVM mode (bench and serve run on the "
                    + "stack's defaults)");
            return 2;
        }
        if (processes) {
            return ProcessMode.run(this, ts, out);
        }
        String loadBefore = loadAverage();
        List<CompareReport.CaseResult> results = new ArrayList<>();
        if (!json) {
            out.printf("compare: %d round(s) of %.1f s warm-up + %.1f s per side, load average %s%n",
                    rounds, warmup, seconds, loadBefore);
            out.printf("compare: the TLS cases run on TLS provider %s on both sides%n", RawTls.PROVIDER);
            out.println(rawReadLine());
            if (oursWaterMarks.equals("raw")) {
                out.println("ours' water marks: the raw writer's (high mark depth x size, at least 1 MiB)");
            }
        }
        for (CompareCase c : CompareCase.all(ts)) {
            if (!only.isEmpty() && only.stream().noneMatch(s -> c.name().contains(s))) {
                continue;
            }
            CompareReport.CaseResult r = new CompareReport.CaseResult(c);
            for (int i = 0; i < rounds; i++) {
                Sample ours = run(new OursRun(c, oursWaterMarks.equals("raw")));
                r.oursLatency.add(lastLatency);
                Sample raw = run(new RawRun(c, rawReadMode));
                r.rawLatency.add(lastLatency);
                r.add(ours, raw);
                if (!json) {
                    out.println(CompareReport.roundLine(c, i + 1, ours, raw));
                }
            }
            results.add(r);
            if (!json) {
                out.println(CompareReport.medianLine(r));
            }
        }
        String loadAfter = loadAverage();
        String doc = withRawRead(CompareReport.json(results, rounds, warmup, seconds, loadBefore, loadAfter));
        if (jsonOut != null) {
            Files.writeString(jsonOut, doc + System.lineSeparator());
        }
        if (htmlOut != null) {
            Files.writeString(htmlOut, HtmlReport.page(results, new HtmlReport.Context(rounds, warmup, seconds,
                    loadBefore, loadAfter, cpuModel(), Runtime.getRuntime().availableProcessors(),
                    "Java " + System.getProperty("java.version"), java.time.Instant.now().toString())));
        }
        if (json) {
            out.println(doc);
        } else {
            out.println();
            out.println(CompareReport.summary(results));
            out.printf("load average before %s, after %s%n", loadBefore, loadAfter);
        }
        return results.stream().anyMatch(CompareReport.CaseResult::failed) ? 1 : 0;
    }

    /** {@link #rawRead}, parsed. */
    RawRead.Mode rawReadMode = RawRead.Mode.REQUEST_RESPONSE;

    /** The report header's line naming the raw Read baseline. */
    String rawReadLine() {
        return "raw Read baseline: " + rawReadMode.cliName() + (rawReadMode == RawRead.Mode.REQUEST_RESPONSE
                ? " (28-octet requests, at most the case's ORD outstanding, each answered with its octets)"
                : " (bulk writes while writable, no round trip)");
    }

    /** The JSON document with the raw Read baseline named first ({@code "rawRead"}). */
    String withRawRead(String doc) {
        return "{\"rawRead\":\"" + rawReadMode.cliName() + "\"," + doc.substring(1);
    }

    private Sample run(CompareRun run) {
        lastLatency = new Histogram(3);
        try (run) {
            run.open();
            Thread client = CompareRun.threadOf(run.clientLoop);
            Thread server = CompareRun.threadOf(run.serverLoop);
            run.start();
            Thread.sleep((long) (warmup * 1000));
            run.onClientLoop(run.rtt::reset);
            long m0 = run.messages();
            long t0 = System.nanoTime();
            long c0 = threads.getThreadCpuTime(client.getId());
            long s0 = threads.getThreadCpuTime(server.getId());
            long ac0 = threads.getThreadAllocatedBytes(client.getId());
            long as0 = threads.getThreadAllocatedBytes(server.getId());
            Thread.sleep((long) (seconds * 1000));
            long m1 = run.messages();
            long t1 = System.nanoTime();
            long c1 = threads.getThreadCpuTime(client.getId());
            long s1 = threads.getThreadCpuTime(server.getId());
            long ac1 = threads.getThreadAllocatedBytes(client.getId());
            long as1 = threads.getThreadAllocatedBytes(server.getId());
            Histogram h = new Histogram(3);
            run.onClientLoop(() -> h.add(run.rtt));
            lastLatency = h;
            run.stopped = true;
            if (run.failure != null) {
                return failed(run.failure.toString());
            }
            double n = m1 - m0;
            if (n <= 0) {
                return failed("no message completed");
            }
            double secs = (t1 - t0) / 1e9;
            return new Sample(n / secs, n * run.c.size() * 8 / secs / 1e9,
                    h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(50) / 1e3,
                    h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(99) / 1e3,
                    (c1 - c0) / 1e3 / n, (s1 - s0) / 1e3 / n, (ac1 - ac0) / n, (as1 - as0) / n, null);
        } catch (Exception e) {
            return failed(e.toString());
        }
    }

    private static Sample failed(String why) {
        return new Sample(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
                Double.NaN, why);
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (Exception e) {
            return "unknown";
        }
    }

    static String cpuModel() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse("unknown");
        } catch (Exception e) {
            return "unknown";
        }
    }

    static <T> double median(List<T> samples, Function<T, Double> f) {
        double[] v = samples.stream().map(f).mapToDouble(Double::doubleValue).filter(d -> !Double.isNaN(d)).toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }
}
