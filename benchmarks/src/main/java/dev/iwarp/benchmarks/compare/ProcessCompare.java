package dev.iwarp.benchmarks.compare;

import dev.iwarp.benchmarks.compare.Compare.Sample;
import dev.iwarp.benchmarks.compare.process.RawClient;
import dev.iwarp.benchmarks.compare.process.RawPeer;
import dev.iwarp.benchmarks.compare.process.RawRead;
import dev.iwarp.bootstrap.Transport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code compare --processes}: as users run it, every side its own JVM. Ours: a {@code bench} client process
 * against a {@code serve} process (the packaged iwarp-server.jar); raw: a {@link RawClient} process against a
 * {@link RawPeer} process. One server process of each kind per transport for all cases; a fresh client process per
 * run; rounds interleaved (ours, raw, ours, raw ...). CPU and allocation per message are per process (all threads:
 * event loops, JIT compiler, GC), each process reporting its own: the clients in their JSON line, the servers
 * when asked right before and right after the measured phase.
 */
final class ProcessCompare {
    private static final Pattern FIELD = Pattern.compile("\"([a-z0-9_]+)\": (\"[^\"]*\"|[^,}]+)");

    private final Path serveJar;
    private final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    private final String classPath = System.getProperty("java.class.path");
    /** Seconds of warm-up per process, or {@link #STABLE}: until the rate holds, at most {@link #warmupMax}. */
    private final double warmup;
    private final double warmupMax;
    private final double seconds;
    /** Runs whose warm-up was 'stable' and ended with the rate holding, and all such runs; per side (ours, raw). */
    private final int[] stableRuns = new int[2];
    private final int[] stableAsked = new int[2];
    private final PrintStream out;
    private final List<Process> servers = new ArrayList<>();
    /** The raw program of the Read cases ({@code compare --raw-read}). */
    RawRead.Mode rawRead = RawRead.Mode.REQUEST_RESPONSE;
    /** bench's --cq-mod (1: every request signaled). */
    int cqMod = 1;

    static final double STABLE = -1;

    ProcessCompare(Path serveJar, String warmup, double warmupMax, double seconds, PrintStream out) {
        this.serveJar = serveJar;
        this.warmup = warmup.equals("stable") ? STABLE : Double.parseDouble(warmup);
        this.warmupMax = warmupMax;
        if (this.warmup != STABLE && this.warmup < 0 || warmupMax <= 0) {
            throw new IllegalArgumentException("--process-warmup must be 'stable' or seconds >= 0, --warmup-max > 0");
        }
        this.seconds = seconds;
        this.out = out;
    }

    /** Most connections per case ({@code --connections}): bench's own limit. */
    static final int MAX_CONNECTIONS = 10_000;

    /** The cases of this mode on one transport, each on every count of {@code connections} (in that order). */
    static List<CompareCase> cases(Transport t, List<Integer> connections) {
        List<CompareCase> out = new ArrayList<>();
        for (CompareCase c : cases(t)) {
            for (int n : connections) {
                out.add(c.onConnections(n));
            }
        }
        return out;
    }

    /** The cases of this mode on one transport: what bench and the raw pair both run. */
    static List<CompareCase> cases(Transport t) {
        return List.of(new CompareCase(CompareCase.Op.WRITE, 65536, true, t, CompareCase.TABLE_DEPTH),
                new CompareCase(CompareCase.Op.WRITE, 65536, false, t, CompareCase.TABLE_DEPTH),
                new CompareCase(CompareCase.Op.READ, 65536, true, t, CompareCase.TABLE_DEPTH),
                new CompareCase(CompareCase.Op.READ, 65536, false, t, CompareCase.TABLE_DEPTH),
                new CompareCase(CompareCase.Op.WRITE, 1024, true, t, CompareCase.TABLE_DEPTH),
                new CompareCase(CompareCase.Op.PINGPONG, 64, true, t, 1),
                new CompareCase(CompareCase.Op.PIPELINE, 64, true, t, 64));
    }

    /** Starts serve and the raw peer on {@code t}; returns their ports {serve, raw}. */
    int[] startServers(Transport t) throws Exception {
        if (!Files.isRegularFile(serveJar)) {
            throw new IOException("no " + serveJar + ": build it (mvn package -pl iwarp-server -am) or name it with --serve-jar");
        }
        // --read-rate 0: serve's default budget of Read Response octets per connection (1 GiB/s) would cap one
        // connection's Reads below what the machine does, and the raw peer has no such budget: this compares the
        // stacks, not the budget
        // --max-per-source 0: its default (256) counts bench's connections and the cost question's own one from
        // 127.0.0.1 together, so at --connections 256 the question was refused; compare is serve's only client
        int serve = start(List.of(java, "-Dio.netty.leakDetection.level=disabled", "-jar", serveJar.toString(), "serve",
                "--address", "127.0.0.1", "--port", "0", "--transport", t.cliName(), "--read-rate", "0",
                "--max-per-source", "0"),
                Pattern.compile("listening on 127\\.0\\.0\\.1:(\\d+) "));
        int raw = start(List.of(java, "-Dio.netty.leakDetection.level=disabled", "-cp", classPath,
                RawPeer.class.getName(), "--transport", t.cliName()), Pattern.compile("^listening (\\d+)$"));
        return new int[] {serve, raw};
    }

    private int start(List<String> command, Pattern ready) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        servers.add(p);
        CompletableFuture<Integer> port = new CompletableFuture<>();
        List<String> seen = new ArrayList<>();
        Thread drain = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    Matcher m = ready.matcher(line);
                    if (!port.isDone() && m.find()) {
                        port.complete(Integer.parseInt(m.group(1)));
                    } else if (!port.isDone() && seen.size() < 20) {
                        seen.add(line);
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
            port.completeExceptionally(new IOException(String.join(" ", command.subList(1, command.size()))
                    + " ended before listening: " + String.join(" | ", seen)));
        }, "compare-drain");
        drain.setDaemon(true);
        drain.start();
        return port.get(60, TimeUnit.SECONDS);
    }

    void stopServers() {
        for (Process p : servers) {
            p.destroy();
        }
        for (Process p : servers) {
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        servers.clear();
    }

    /** Ours: a bench process against serve. */
    Sample ours(CompareCase c, int port) {
        return sample(oursCommand(c, port), 0, c.connections());
    }

    /** The bench command line of {@link #ours}. */
    List<String> oursCommand(CompareCase c, int port) {
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", serveJar.toString(), "bench", "127.0.0.1:" + port,
                "--transport", c.transport().cliName(), "--op", switch (c.op()) {
                    case WRITE -> "write";
                    case READ -> "read";
                    default -> "send";
                }, "--size", String.valueOf(c.size()), "--depth", String.valueOf(c.depth()),
                "--duration", String.valueOf(seconds), "--output", "json"));
        if (c.connections() != 1) {
            cmd.addAll(List.of("--connections", String.valueOf(c.connections())));
        }
        cmd.addAll(warmup == STABLE ? List.of("--warmup", "stable", "--warmup-max", String.valueOf(warmupMax))
                : List.of("--warmup", warmup + "s"));
        if (c.crc()) {
            cmd.add("--crc");
        }
        if (cqMod > 1) {
            cmd.addAll(List.of("--cq-mod", String.valueOf(Math.min(cqMod, c.depth()))));
        }
        return cmd;
    }

    /** Raw: a RawClient process against the raw peer. */
    Sample raw(CompareCase c, int port) {
        return sample(List.of(java, "-cp", classPath, RawClient.class.getName(), "--port", String.valueOf(port),
                "--transport", c.transport().cliName(), "--case", c.op().name().toLowerCase(Locale.ROOT),
                "--size", String.valueOf(c.size()), "--depth", String.valueOf(c.depth()),
                "--connections", String.valueOf(c.connections()), "--raw-read", rawRead.cliName(),
                "--warmup", warmup == STABLE ? "stable" : String.valueOf(warmup), "--warmup-max",
                String.valueOf(warmupMax), "--seconds", String.valueOf(seconds)), 1, c.connections());
    }

    /** The warm-up rule, as the report prints it. */
    String warmupRule() {
        return warmup == STABLE ? String.format(Locale.ROOT, "warm-up until the rate is stable (at most %.0f s)", warmupMax)
                : String.format(Locale.ROOT, "%.1f s warm-up", warmup);
    }

    /** For a 'stable' warm-up: how many runs per side reached a stable rate, else null. */
    String warmupOutcome() {
        return warmup != STABLE ? null : String.format(Locale.ROOT, "warm-up reached a stable rate in %d of %d runs of "
                + "ours and %d of %d of raw (the others measured after --warmup-max)", stableRuns[0], stableAsked[0],
                stableRuns[1], stableAsked[1]);
    }

    private static final Pattern WARMUP_STABLE = Pattern.compile("\"warmup_stable\": (true|false)");

    private Sample sample(List<String> cmd, int side, int connections) {
        try {
            Path err = Files.createTempFile("compare-", ".err");
            try {
                Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
                CompletableFuture<String> stdout = CompletableFuture.supplyAsync(() -> {
                    try {
                        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                    } catch (IOException e) {
                        return "";
                    }
                });
                // and a second per 4 connections to set them up and close them on a loaded machine
                long limit = (long) ((warmup == STABLE ? warmupMax : warmup) + seconds) + 60 + connections / 4;
                if (!p.waitFor(limit, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    return failed("no result within " + limit + " s");
                }
                String text = stdout.get(10, TimeUnit.SECONDS);
                if (p.exitValue() != 0) {
                    List<String> lines = Files.readAllLines(err);
                    return failed("exit " + p.exitValue() + ": " + (lines.isEmpty() ? text.trim()
                            : lines.get(lines.size() - 1)));
                }
                String json = text.lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElse("");
                Matcher stable = WARMUP_STABLE.matcher(json);
                if (warmup == STABLE && stable.find()) {
                    stableAsked[side]++;
                    stableRuns[side] += stable.group(1).equals("true") ? 1 : 0;
                }
                return parse(json);
            } finally {
                Files.deleteIfExists(err);
            }
        } catch (Exception e) {
            return failed(e.toString());
        }
    }

    /** One JSON line of bench's (or RawClient's) field names as a sample. */
    static Sample parse(String json) {
        Map<String, Double> f = new HashMap<>();
        Matcher m = FIELD.matcher(json);
        while (m.find()) {
            String v = m.group(2).trim();
            f.put(m.group(1), v.startsWith("\"") || v.equals("null") || v.equals("true") || v.equals("false")
                    ? Double.NaN : Double.parseDouble(v));
        }
        if (!f.containsKey("msg_rate_mpps")) {
            return failed("no result line: " + json);
        }
        java.util.function.Function<String, Double> g = k -> f.getOrDefault(k, Double.NaN);
        return new Sample(g.apply("msg_rate_mpps") * 1e6, g.apply("gbit_per_sec"), g.apply("t_typical_usec"),
                g.apply("t_p99_usec"), g.apply("client_process_cpu_usec_per_msg"), g.apply("server_cpu_usec_per_msg"),
                g.apply("client_process_alloc_bytes_per_msg"), g.apply("server_alloc_bytes_per_msg"), null);
    }

    static Sample failed(String why) {
        return new Sample(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
                Double.NaN, why);
    }

    /**
     * The smoke round's check: every column of both sides present (a rate, CPU and allocation per message of
     * client and server; ping-pong also p50/p99). Returns what is missing, or null.
     */
    static String missingColumns(CompareReport.CaseResult r) {
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < r.ours.size(); i++) {
            check(r.c, "ours", r.ours.get(i), missing);
            check(r.c, "raw", r.raw.get(i), missing);
        }
        return missing.isEmpty() ? null : String.join(", ", missing);
    }

    private static void check(CompareCase c, String side, Sample s, List<String> missing) {
        if (s.error() != null) {
            missing.add(side + " failed: " + s.error());
            return;
        }
        Map<String, Double> v = new java.util.LinkedHashMap<>();
        v.put("rate", s.rate());
        v.put("client cpu", s.cpuClientUs());
        v.put("server cpu", s.cpuServerUs());
        v.put("client alloc", s.allocClient());
        v.put("server alloc", s.allocServer());
        if (c.op() == CompareCase.Op.PINGPONG) {
            v.put("p50", s.p50us());
            v.put("p99", s.p99us());
        }
        v.forEach((k, d) -> {
            if (d.isNaN() || d < 0 || (k.equals("rate") && d <= 0)) {
                missing.add(side + " " + k);
            }
        });
    }
}
