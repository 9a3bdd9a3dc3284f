package dev.iwarp.server;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

/** {@code bench}'s output: perftest's header and columns ({@code text}), or one record as {@code json} or {@code csv}. */
final class BenchReport {
    enum Format { text, json, csv }

    private static final String RULE = "-".repeat(96);

    private BenchReport() {
    }

    /** The header, printed once connected and before the run (text: to stdout; json/csv: to stderr). */
    static void header(PrintWriter out, BenchSettings s, String summary, String parameters, int depth,
                       int signalEvery) {
        String count = s.durationNanos() > 0 ? String.format(Locale.ROOT, "%.3g s", s.durationNanos() / 1e9)
                : String.valueOf(s.iterations() * s.connections());
        out.printf("bench %s: %d octets x %s, depth %d, %d connection(s), %s%n", s.op(), s.size(), count, depth,
                s.connections(), summary);
        out.println(RULE);
        out.printf("                    %s test (iwarp-server bench)%n", switch (s.op()) {
            case write -> "RDMA Write BW";
            case read -> "RDMA Read BW";
            case send -> "Send/echo BW and latency";
        });
        out.printf(" Connection      : %s%n", parameters);
        out.printf(" Connections     : %-10d Depth           : %d%s%s%n", s.connections(), depth,
                depth < s.depth() ? " (asked " + s.depth() + ")" : "",
                signalEvery > 1 ? ", 1 in " + signalEvery + " signaled (--cq-mod)" : "");
        out.printf(" Message size    : %-10d %s%n", s.size(), s.durationNanos() > 0
                ? String.format(Locale.ROOT, "Duration        : %.3g s", s.durationNanos() / 1e9)
                : "Iterations      : " + s.iterations() + " per connection");
        out.printf(" Machine         : %s%n", machine());
        out.printf(" Warm-up         : %s%n", s.warmupUntilStable()
                ? String.format(Locale.ROOT, "until the rate is stable, at most %.3g s (not measured)", s.warmupNanos() / 1e9)
                : s.warmupNanos() > 0 ? String.format(Locale.ROOT, "%.3g s (not measured)", s.warmupNanos() / 1e9)
                : s.warmupIterations() > 0 ? s.warmupIterations() + " iterations per connection (not measured)" : "none");
        out.printf(" Verify          : %s%n", s.verify() ? "every octet (" + (switch (s.op()) {
            case write -> "each Write read back";
            case read -> "each Read of data written first";
            case send -> "each echo";
        }) + ")" : "off");
        out.println(RULE);
        out.flush();
    }

    /** The result table (perftest's columns), the cost per message and a totals line. */
    static void text(PrintWriter out, BenchResult r) {
        text(out, r, false);
    }

    /** As {@link #text(PrintWriter, BenchResult)}; {@code interruptedInWarmup}: SIGINT ended the warm-up. */
    static void text(PrintWriter out, BenchResult r, boolean interruptedInWarmup) {
        row(out, " %-10s %-14s %-18s %-21s %-14s", "#bytes", "#iterations", "BW peak[MB/sec]", "BW average[MB/sec]",
                "MsgRate[Mpps]");
        row(out, " %-10d %-14d %-18.2f %-21.2f %-14.6f", r.size(), r.iterations(), r.peakMbPerSecond(),
                r.mbPerSecond(), r.messagesPerSecond() / 1e6);
        Histogram h = r.latency();
        row(out, " %-10s %-14s %-13s %-17s %-13s %-13s %-15s %-13s", "#bytes", "#iterations", "t_min[usec]",
                "t_typical[usec]", "t_avg[usec]", "t_p99[usec]", "t_p99.9[usec]", "t_max[usec]");
        row(out, " %-10d %-14d %-13.2f %-17.2f %-13.2f %-13.2f %-15.2f %-13.2f", r.size(),
                r.iterations(), us(h.getMinValue()), us(h.getValueAtPercentile(50)), h.getMean() / 1e3,
                us(h.getValueAtPercentile(99)), us(h.getValueAtPercentile(99.9)), us(h.getMaxValue()));
        out.println(RULE);
        out.printf(Locale.ROOT, " Cost (client)   : %s CPU usec/msg, %s bytes allocated/msg (its event loop threads)%n",
                num(r.cpuMicrosPerMessage(), 2), num(r.allocatedPerMessage(), 0));
        out.printf(Locale.ROOT, " Cost (process)  : %s CPU usec/msg, %s bytes allocated/msg (all of bench's threads)%n",
                num(r.perMessage(r.process().cpuNanos(), true), 2), num(r.perMessage(r.process().allocatedBytes(), false), 0));
        out.printf(Locale.ROOT, " Cost (server)   : %s%n", r.server().cpuNanos() < 0
                ? "not measured (the server did not answer bench's cost question; --no-server-cost, or not serve)"
                : num(r.perMessage(r.server().cpuNanos(), true), 2) + " CPU usec/msg, "
                + num(r.perMessage(r.server().allocatedBytes(), false), 0) + " bytes allocated/msg (serve's process)");
        out.printf(Locale.ROOT, " Warm-up took    : %s%n", warmupLine(r, interruptedInWarmup));
        // MPA's MULPDU follows the path's EMSS after startup: the header's figure may be the startup one
        out.printf(" Connection end  : %s%n", r.parameters());
        if (r.verifyOn()) {
            out.printf(" Verify          : %d octets checked (warm-up included), 0 mismatches%n", r.verifiedOctets());
        }
        out.printf(Locale.ROOT, "  bytes %d, iterations %d, %.3f s, %.3f Gbit/s average%n", r.bytes(), r.iterations(),
                r.nanos() / 1e9, r.gbitPerSecond());
        out.flush();
    }

    /** How long the warm-up ran and, for {@code --warmup stable}, whether the rate was stable and its windows. */
    static String warmupLine(BenchResult r) {
        return warmupLine(r, false);
    }

    /** As {@link #warmupLine(BenchResult)}; {@code interrupted}: SIGINT ended it, not stability or --warmup-max. */
    static String warmupLine(BenchResult r, boolean interrupted) {
        String took = String.format(Locale.ROOT, "%.1f s", r.warmupNanos() / 1e9) + (interrupted ? ", interrupted" : "");
        if (r.warmupStable() == null) {
            return took;
        }
        StringJoiner rates = new StringJoiner(" ");
        r.warmupRates().forEach(v -> rates.add(String.format(Locale.ROOT, "%.0f", v)));
        return took + (r.warmupStable() ? ", rate stable" : interrupted ? " before the rate was stable"
                : ", rate NOT stable (--warmup-max reached)")
                + " (MB/sec per 0.5 s: " + rates + ")";
    }

    /** CPU model, cores, load average and Java: what every figure depends on. */
    static String machine() {
        String cpu = "unknown CPU";
        try {
            cpu = java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/cpuinfo")).stream()
                    .filter(l -> l.startsWith("model name")).map(l -> l.substring(l.indexOf(':') + 1).trim())
                    .findFirst().orElse(cpu);
        } catch (IOException | RuntimeException e) {
            // not Linux: the model stays unknown
        }
        double load = java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        return cpu + ", " + Runtime.getRuntime().availableProcessors() + " cores, load average "
                + (load < 0 ? "unknown" : String.format(Locale.ROOT, "%.2f", load)) + ", Java "
                + System.getProperty("java.version");
    }

    /**
     * The latency distribution in HdrHistogram's percentile format (values in usec: the histogram records
     * nanoseconds), five ticks per half distance as HdrHistogram's own examples use.
     */
    static void histogram(java.nio.file.Path file, BenchResult r) throws IOException {
        try (java.io.PrintStream ps = new java.io.PrintStream(java.nio.file.Files.newOutputStream(file), false,
                java.nio.charset.StandardCharsets.UTF_8)) {
            r.latency().outputPercentileDistribution(ps, 5, 1000.0);
            if (ps.checkError()) {
                throw new IOException("--hist " + file + ": cannot write it");
            }
        } catch (java.nio.file.FileSystemException e) { // its message is the file name alone
            String why = e.getReason() != null ? e.getReason() : e.getClass().getSimpleName();
            throw new IOException("--hist " + file + ": cannot write it (" + why + ")", e);
        }
    }

    private static void row(PrintWriter out, String format, Object... values) {
        out.println(String.format(Locale.ROOT, format, values).stripTrailing());
    }

    /** The figures as one flat record, in the order of the csv columns. */
    static Map<String, Object> fields(BenchResult r) {
        Histogram h = r.latency();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("op", r.op().name());
        m.put("connection", r.parameters());
        m.put("connections", r.connections());
        m.put("depth", r.depth());
        m.put("bytes", r.size());
        m.put("iterations", r.iterations());
        m.put("seconds", r.nanos() / 1e9);
        m.put("bw_peak_mb_per_sec", r.peakMbPerSecond());
        m.put("bw_average_mb_per_sec", r.mbPerSecond());
        m.put("gbit_per_sec", r.gbitPerSecond());
        m.put("msg_rate_mpps", r.messagesPerSecond() / 1e6);
        m.put("t_min_usec", us(h.getMinValue()));
        m.put("t_typical_usec", us(h.getValueAtPercentile(50)));
        m.put("t_avg_usec", h.getMean() / 1e3);
        m.put("t_p99_usec", us(h.getValueAtPercentile(99)));
        m.put("t_p99_9_usec", us(h.getValueAtPercentile(99.9)));
        m.put("t_max_usec", us(h.getMaxValue()));
        m.put("client_cpu_usec_per_msg", r.cpuMicrosPerMessage());
        m.put("client_alloc_bytes_per_msg", r.allocatedPerMessage());
        m.put("client_process_cpu_usec_per_msg", r.perMessage(r.process().cpuNanos(), true));
        m.put("client_process_alloc_bytes_per_msg", r.perMessage(r.process().allocatedBytes(), false));
        m.put("server_cpu_usec_per_msg", r.perMessage(r.server().cpuNanos(), true));
        m.put("server_alloc_bytes_per_msg", r.perMessage(r.server().allocatedBytes(), false));
        m.put("warmup_seconds", r.warmupNanos() / 1e9);
        if (r.warmupStable() != null) {
            m.put("warmup_stable", r.warmupStable());
        }
        // the negotiation line when connected (the header's) and at the end: MPA's MULPDU follows the EMSS,
        // which on loopback grows after startup (32762 at startup, 64768 once the MSS is 65483)
        m.put("connection_at_start", r.parametersAtStart());
        if (r.verifyOn()) {
            m.put("verified_octets", r.verifiedOctets()); // absent, not 0, when nothing was checked
        }
        return m;
    }

    static void json(PrintWriter out, BenchResult r) {
        json(out, r, false);
    }

    /** As {@link #json(PrintWriter, BenchResult)}; a run cut short (SIGINT) carries {@code "partial": true}. */
    static void json(PrintWriter out, BenchResult r, boolean partial) {
        StringJoiner j = new StringJoiner(", ", "{", "}");
        withPartial(fields(r), partial).forEach((k, v) -> j.add("\"" + k + "\": " + (v instanceof String t ? quote(t) : value(v, "null"))));
        out.println(j);
        out.flush();
    }

    static void csv(PrintWriter out, BenchResult r) {
        csv(out, r, false);
    }

    /** As {@link #csv(PrintWriter, BenchResult)}; a run cut short (SIGINT) has a {@code partial} column. */
    static void csv(PrintWriter out, BenchResult r, boolean partial) {
        Map<String, Object> f = withPartial(fields(r), partial);
        out.println(String.join(",", f.keySet()));
        StringJoiner row = new StringJoiner(",");
        f.values().forEach(v -> row.add(v instanceof String t ? quote(t) : value(v, "")));
        out.println(row);
        out.flush();
    }

    private static Map<String, Object> withPartial(Map<String, Object> m, boolean partial) {
        if (partial) {
            m.put("partial", true);
        }
        return m;
    }

    /** The line before a text summary of a run cut short: which figures it covers. */
    static String partialNote(BenchResult r) {
        return partialNote(r, false);
    }

    /** As {@link #partialNote(BenchResult)}; {@code inWarmup}: SIGINT came during the warm-up. */
    static String partialNote(BenchResult r, boolean inWarmup) {
        if (inWarmup) {
            return String.format(Locale.ROOT, "interrupted during the warm-up (after %.1f s): nothing was measured",
                    r.warmupNanos() / 1e9);
        }
        return String.format(Locale.ROOT, "interrupted: partial results, the %d iterations completed in the first %.1f s",
                r.iterations(), r.nanos() / 1e9);
    }

    private static String value(Object v, String notMeasured) {
        if (v instanceof Double d) {
            return d.isNaN() || d.isInfinite() ? notMeasured : String.format(Locale.ROOT, "%.6f", d);
        }
        return String.valueOf(v);
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static String num(double v, int decimals) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    private static double us(long nanos) {
        return nanos / 1e3;
    }
}
