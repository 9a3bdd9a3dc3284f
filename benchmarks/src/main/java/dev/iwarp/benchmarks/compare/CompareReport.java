package dev.iwarp.benchmarks.compare;

import dev.iwarp.benchmarks.compare.Compare.Sample;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/** Text and JSON output of {@link Compare}. */
final class CompareReport {
    private CompareReport() {
    }

    /** The rounds of one case. */
    static final class CaseResult {
        final CompareCase c;
        final List<Sample> ours = new ArrayList<>();
        final List<Sample> raw = new ArrayList<>();
        final List<Sample> ratios = new ArrayList<>();
        /** Per round: raw Netty's CPU per message over ours, both event loops added ({@link #cpuRatio}). */
        final List<Double> cpuRatios = new ArrayList<>();
        /** Per-message latency of every round merged, per side ({@code compare --html} plots them). */
        final org.HdrHistogram.Histogram oursLatency = new org.HdrHistogram.Histogram(3);
        final org.HdrHistogram.Histogram rawLatency = new org.HdrHistogram.Histogram(3);

        CaseResult(CompareCase c) {
            this.c = c;
        }

        void add(Sample o, Sample r) {
            ours.add(o);
            raw.add(r);
            ratios.add(ratio(c, o, r));
            cpuRatios.add(cpuRatio(o, r));
        }

        boolean failed() {
            return ours.stream().anyMatch(s -> s.error() != null) || raw.stream().anyMatch(s -> s.error() != null);
        }

        Sample medianOurs() {
            return median(ours);
        }

        Sample medianRaw() {
            return median(raw);
        }

        /** Median of the per-round ratios (rate in {@code rate}, p50/p99 ratios in {@code p50us}/{@code p99us}). */
        Sample medianRatio() {
            return median(ratios);
        }

        double medianCpuRatio() {
            return Compare.median(cpuRatios, d -> d);
        }
    }

    /**
     * Raw Netty's CPU per message over ours, client and server event loops added: higher is better, like
     * the rate ratio: what a message costs, whether or not the loops were kept busy.
     */
    static double cpuRatio(Sample o, Sample r) {
        return (r.cpuClientUs() + r.cpuServerUs()) / (o.cpuClientUs() + o.cpuServerUs());
    }

    private static boolean latency(CompareCase c) {
        return c.op() == CompareCase.Op.PINGPONG;
    }

    /** Throughput cases: ours/raw rate. Ping-pong: ours/raw p50 and p99 (lower is better). */
    private static Sample ratio(CompareCase c, Sample o, Sample r) {
        return new Sample(o.rate() / r.rate(), Double.NaN, o.p50us() / r.p50us(), o.p99us() / r.p99us(),
                o.cpuClientUs() / r.cpuClientUs(), o.cpuServerUs() / r.cpuServerUs(), Double.NaN, Double.NaN, null);
    }

    private static Sample median(List<Sample> s) {
        Function<Function<Sample, Double>, Double> m = f -> Compare.median(s, f);
        return new Sample(m.apply(Sample::rate), m.apply(Sample::gbits), m.apply(Sample::p50us), m.apply(Sample::p99us),
                m.apply(Sample::cpuClientUs), m.apply(Sample::cpuServerUs), m.apply(Sample::allocClient),
                m.apply(Sample::allocServer), null);
    }

    private static String side(CompareCase c, Sample s) {
        if (s.error() != null) {
            return "FAILED " + s.error();
        }
        String perf = latency(c)
                ? String.format(Locale.ROOT, "p50 %6.1f us p99 %6.1f us %8.0f rt/s", s.p50us(), s.p99us(), s.rate())
                : c.op() == CompareCase.Op.PIPELINE
                ? String.format(Locale.ROOT, "%10.0f msg/s", s.rate())
                : String.format(Locale.ROOT, "%6.2f Gbit/s %8.0f msg/s", s.gbits(), s.rate());
        return String.format(Locale.ROOT, "%s cpu c/s %6.2f/%6.2f us alloc c/s %6.0f/%6.0f B", perf,
                s.cpuClientUs(), s.cpuServerUs(), s.allocClient(), s.allocServer());
    }

    private static String ratioText(CompareCase c, Sample r) {
        return latency(c)
                ? String.format(Locale.ROOT, "p50 %.2f x p99 %.2f x", r.p50us(), r.p99us())
                : String.format(Locale.ROOT, "%.2f x", r.rate());
    }

    static String roundLine(CompareCase c, int round, Sample ours, Sample raw) {
        return String.format(Locale.ROOT, "%-24s r%d ours: %s%n%-24s    raw:  %s%n%-24s    ratio ours/raw %s, cpu raw/ours %.2f x",
                c.name(), round, side(c, ours), "", side(c, raw), "", ratioText(c, ratio(c, ours, raw)), cpuRatio(ours, raw));
    }

    static String medianLine(CaseResult r) {
        return String.format(Locale.ROOT, "%-24s MEDIAN ours: %s%n%-24s        raw:  %s%n%-24s        ratio %s, cpu raw/ours %.2f x%n",
                r.c.name(), side(r.c, r.medianOurs()), "", side(r.c, r.medianRaw()), "", ratioText(r.c, r.medianRatio()),
                r.medianCpuRatio());
    }

    /** One line per case: the medians side by side. */
    static String summary(List<CaseResult> results) {
        return summary(results, false);
    }

    /** As above; {@code perProcess}: the CPU and allocation columns are per process ({@code compare --processes}). */
    static String summary(List<CaseResult> results, boolean perProcess) {
        String sides = perProcess ? "client/server process, all threads" : "client/server event loop";
        StringBuilder b = new StringBuilder("medians (c/s = " + sides + "; per message; "
                + "ping-pong ratio is ours/raw round trip, lower is better; cpu x is raw/ours CPU per message, "
                + "both sides added, higher is better)\n");
        b.append(String.format(Locale.ROOT, "%-24s %-22s %-22s %9s %6s %15s %15s %15s %15s%n", "case", "ours", "raw", "ratio",
                "cpu x", "ours cpu us", "raw cpu us", "ours alloc B", "raw alloc B"));
        for (CaseResult r : results) {
            Sample o = r.medianOurs();
            Sample w = r.medianRaw();
            Sample q = r.medianRatio();
            boolean lat = latency(r.c);
            b.append(String.format(Locale.ROOT, "%-24s %-22s %-22s %9s %6.2f %15s %15s %15s %15s%n", r.c.name(),
                    headline(r.c, o), headline(r.c, w), lat ? String.format(Locale.ROOT, "%.2f/%.2f", q.p50us(), q.p99us())
                            : String.format(Locale.ROOT, "%.2f", q.rate()), r.medianCpuRatio(),
                    pair(o.cpuClientUs(), o.cpuServerUs(), "%.1f"), pair(w.cpuClientUs(), w.cpuServerUs(), "%.1f"),
                    pair(o.allocClient(), o.allocServer(), "%.0f"), pair(w.allocClient(), w.allocServer(), "%.0f")));
        }
        return b.toString();
    }

    private static String headline(CompareCase c, Sample s) {
        if (latency(c)) {
            return String.format(Locale.ROOT, "p50 %.1f p99 %.1f us", s.p50us(), s.p99us());
        }
        if (c.op() == CompareCase.Op.PIPELINE) {
            return String.format(Locale.ROOT, "%.0f msg/s", s.rate());
        }
        return String.format(Locale.ROOT, "%.2f Gbit/s", s.gbits());
    }

    private static String pair(double a, double b, String f) {
        return String.format(Locale.ROOT, f + "/" + f, a, b);
    }

    static String json(List<CaseResult> results, int rounds, double warmup, double seconds, String loadBefore,
                       String loadAfter) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "{\"rounds\":%d,\"warmupSeconds\":%s,\"seconds\":%s,\"loadBefore\":\"%s\","
                + "\"loadAfter\":\"%s\",\"cases\":[", rounds, num(warmup), num(seconds), loadBefore, loadAfter));
        for (int i = 0; i < results.size(); i++) {
            CaseResult r = results.get(i);
            b.append(i == 0 ? "" : ",").append("{\"name\":\"").append(r.c.name()).append("\",\"op\":\"")
                    .append(r.c.op()).append("\",\"size\":").append(r.c.size()).append(",\"crc\":").append(r.c.crc())
                    .append(",\"transport\":\"").append(r.c.transport()).append("\",\"depth\":").append(r.c.depth())
                    .append(",\"connections\":").append(r.c.connections()).append(",\"rounds\":[");
            for (int k = 0; k < r.ours.size(); k++) {
                b.append(k == 0 ? "" : ",").append("{\"ours\":").append(json(r.ours.get(k))).append(",\"raw\":")
                        .append(json(r.raw.get(k))).append(",\"ratio\":").append(json(r.ratios.get(k)))
                        .append(",\"cpuRatio\":").append(num(r.cpuRatios.get(k))).append('}');
            }
            b.append("],\"median\":{\"ours\":").append(json(r.medianOurs())).append(",\"raw\":")
                    .append(json(r.medianRaw())).append(",\"ratio\":").append(json(r.medianRatio()))
                    .append(",\"cpuRatio\":").append(num(r.medianCpuRatio())).append("}}");
        }
        return b.append("]}").toString();
    }

    private static String json(Sample s) {
        return String.format(Locale.ROOT, "{\"rate\":%s,\"gbits\":%s,\"p50us\":%s,\"p99us\":%s,\"cpuClientUs\":%s,"
                        + "\"cpuServerUs\":%s,\"allocClientBytes\":%s,\"allocServerBytes\":%s,\"error\":%s}",
                num(s.rate()), num(s.gbits()), num(s.p50us()), num(s.p99us()), num(s.cpuClientUs()),
                num(s.cpuServerUs()), num(s.allocClient()), num(s.allocServer()),
                s.error() == null ? "null" : "\"" + s.error().replace("\\", "\\\\").replace("\"", "\\\"") + "\"");
    }

    private static String num(double d) {
        return Double.isNaN(d) || Double.isInfinite(d) ? "null" : String.format(Locale.ROOT, "%.4g", d);
    }
}
