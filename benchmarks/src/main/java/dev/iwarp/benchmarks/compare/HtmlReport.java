package dev.iwarp.benchmarks.compare;

import dev.iwarp.benchmarks.compare.Compare.Sample;
import dev.iwarp.bootstrap.Transport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code compare --html}: one self-contained page (inline CSS and SVG, no script, nothing fetched) with,
 * per transport, the medians of ours and raw Netty as bar charts (rate per case, CPU per message per case),
 * the latency percentile distribution of each case with latency figures as a plot (both sides, every round
 * merged), and the text summary's table.
 */
final class HtmlReport {
    static final String OURS_COLOUR = "#1f77b4";
    static final String RAW_COLOUR = "#ff7f0e";
    private static final int LABEL_W = 250;
    private static final int BAR_W = 380;
    private static final int ROW_H = 34;

    private HtmlReport() {
    }

    /** What the page says about the run besides the figures. */
    record Context(int rounds, double warmup, double seconds, String loadBefore, String loadAfter, String cpu,
                   int cores, String java, String when) {
    }

    static String page(List<CompareReport.CaseResult> results, Context ctx) {
        StringBuilder b = new StringBuilder(64 * 1024);
        b.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
                .append("<title>compare: iwarp-netty against raw Netty</title>\n<style>\n")
                .append("body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}\n")
                .append("h2{border-bottom:1px solid #ccc;padding-bottom:.2em}\n")
                .append("svg{display:block;margin:.5em 0 1.5em}\nsvg text{font-size:12px;fill:#222}\n")
                .append("table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;")
                .append("text-align:right}td:first-child,th:first-child{text-align:left}\n")
                .append(".plots{display:flex;flex-wrap:wrap;gap:1em}figure{margin:0}figcaption{font-size:13px}\n")
                .append(".key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}\n")
                .append("</style>\n</head>\n<body>\n<h1>Our iWARP stack against an equivalent raw Netty program</h1>\n");
        b.append("<p>").append(esc(String.format(Locale.ROOT,
                "%d round(s) per case, each %.1f s warm-up + %.1f s measured per side, interleaved ours/raw; medians "
                        + "over rounds. CPU %s, %d cores, %s. Load average before %s, after %s. %s.",
                ctx.rounds(), ctx.warmup(), ctx.seconds(), ctx.cpu(), ctx.cores(), ctx.java(), ctx.loadBefore(),
                ctx.loadAfter(), ctx.when()))).append("</p>\n");
        b.append("<p class=\"key\"><span style=\"background:").append(OURS_COLOUR).append("\"></span>ours")
                .append("<span style=\"background:").append(RAW_COLOUR).append("\"></span>raw Netty</p>\n");
        Map<Transport, List<CompareReport.CaseResult>> byTransport = new LinkedHashMap<>();
        for (CompareReport.CaseResult r : results) {
            byTransport.computeIfAbsent(r.c.transport(), t -> new ArrayList<>()).add(r);
        }
        for (Map.Entry<Transport, List<CompareReport.CaseResult>> e : byTransport.entrySet()) {
            String t = e.getKey().name().toLowerCase(Locale.ROOT);
            List<CompareReport.CaseResult> rs = e.getValue();
            b.append("<h2>").append(t).append("</h2>\n");
            b.append("<h3>Rate (median; each case's bars scaled to its larger side; longer is better)</h3>\n");
            b.append(bars(rs, true));
            b.append("<h3>CPU per message, client and server event loops added (median, us; shorter is better)</h3>\n");
            b.append(bars(rs, false));
            b.append("<h3>Latency percentiles (per message, every round merged)</h3>\n<div class=\"plots\">\n");
            for (CompareReport.CaseResult r : rs) {
                if (r.oursLatency.getTotalCount() > 0 || r.rawLatency.getTotalCount() > 0) {
                    b.append("<figure>").append(percentilePlot(r.oursLatency, r.rawLatency))
                            .append("<figcaption>").append(esc(r.c.name())).append(" (")
                            .append(r.oursLatency.getTotalCount()).append(" / ").append(r.rawLatency.getTotalCount())
                            .append(" messages)</figcaption></figure>\n");
                }
            }
            b.append("</div>\n");
            b.append(table(rs));
        }
        return b.append("</body>\n</html>\n").toString();
    }

    /** The figure a rate bar shows, with its unit. */
    private static double rate(CompareCase c, Sample s) {
        return switch (c.op()) {
            case WRITE, READ -> s.gbits();
            default -> s.rate();
        };
    }

    private static String rateUnit(CompareCase c) {
        return switch (c.op()) {
            case WRITE, READ -> "Gbit/s";
            case PINGPONG -> "round trips/s";
            case PIPELINE -> "msg/s";
        };
    }

    private static String bars(List<CompareReport.CaseResult> rs, boolean rate) {
        int h = rs.size() * ROW_H + 10;
        int w = LABEL_W + BAR_W + 170;
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" role=\"img\">\n", w, h, w, h));
        int y = 5;
        for (CompareReport.CaseResult r : rs) {
            Sample o = r.medianOurs();
            Sample raw = r.medianRaw();
            double a = rate ? rate(r.c, o) : o.cpuClientUs() + o.cpuServerUs();
            double z = rate ? rate(r.c, raw) : raw.cpuClientUs() + raw.cpuServerUs();
            String unit = rate ? rateUnit(r.c) : "us";
            b.append(String.format(Locale.ROOT, "<text x=\"0\" y=\"%d\">%s</text>\n", y + 20, esc(r.c.name())));
            if (r.failed() || !(a > 0) || !(z > 0)) {
                b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" style=\"fill:#b00\">%s</text>\n",
                        LABEL_W, y + 20, r.failed() ? "FAILED" : "no figure"));
                y += ROW_H;
                continue;
            }
            double max = Math.max(a, z);
            y = bar(b, y, a, max, OURS_COLOUR, unit);
            y = bar(b, y, z, max, RAW_COLOUR, unit);
            y += ROW_H - 28;
        }
        return b.append("</svg>\n").toString();
    }

    private static int bar(StringBuilder b, int y, double v, double max, String colour, String unit) {
        double len = Math.max(1, v / max * BAR_W);
        b.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"12\" fill=\"%s\"/>"
                        + "<text x=\"%.1f\" y=\"%d\">%s %s</text>\n", LABEL_W, y + 2, len, colour,
                LABEL_W + len + 5, y + 12, fmt(v), unit));
        return y + 14;
    }

    /** Percentile on a log axis of 1/(1-p), as HdrHistogram's plotter draws it, up to 99.999 %. */
    static String percentilePlot(Histogram ours, Histogram raw) {
        final int w = 420;
        final int h = 260;
        final int left = 60;
        final int right = 35;
        final int top = 15;
        final int bottom = 40;
        final double maxNines = 5; // 99.999 %
        List<double[]> o = points(ours);
        List<double[]> r = points(raw);
        double maxUs = 0;
        for (double[] p : o) {
            maxUs = Math.max(maxUs, p[1]);
        }
        for (double[] p : r) {
            maxUs = Math.max(maxUs, p[1]);
        }
        maxUs = niceCeiling(maxUs);
        double pw = w - left - right;
        double ph = h - top - bottom;
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" role=\"img\">\n", w, h, w, h));
        b.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
                + "stroke=\"#999\"/>\n", left, top, pw, ph));
        String[] xLabels = {"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"};
        for (int i = 0; i <= maxNines; i++) {
            double x = left + i / maxNines * pw;
            b.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/>"
                    + "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n", x, top, x, top + ph, x,
                    top + ph + 15, xLabels[i]));
        }
        for (int i = 0; i <= 4; i++) {
            double v = maxUs * i / 4;
            double y = top + ph - i / 4.0 * ph;
            b.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", left, y, left + pw, y, left - 4,
                    y + 4, fmt(v)));
        }
        b.append(String.format(Locale.ROOT, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">percentile</text>\n",
                left + pw / 2, h - 5));
        b.append(String.format(Locale.ROOT, "<text x=\"12\" y=\"%.0f\" text-anchor=\"middle\" "
                + "transform=\"rotate(-90 12 %.0f)\">latency (us)</text>\n", top + ph / 2, top + ph / 2));
        polyline(b, o, OURS_COLOUR, left, top, pw, ph, maxNines, maxUs);
        polyline(b, r, RAW_COLOUR, left, top, pw, ph, maxNines, maxUs);
        return b.append("</svg>").toString();
    }

    /** (nines = log10(1/(1-p)), value in us) at HdrHistogram's percentile ticks, 5 per half distance. */
    static List<double[]> points(Histogram h) {
        List<double[]> out = new ArrayList<>();
        if (h.getTotalCount() == 0) {
            return out;
        }
        for (HistogramIterationValue v : h.percentiles(5)) {
            double p = v.getPercentileLevelIteratedTo() / 100;
            if (p >= 0.99999) {
                out.add(new double[] {5, h.highestEquivalentValue(v.getValueIteratedTo()) / 1e3});
                break;
            }
            out.add(new double[] {Math.log10(1 / (1 - p)), h.highestEquivalentValue(v.getValueIteratedTo()) / 1e3});
        }
        return out;
    }

    private static void polyline(StringBuilder b, List<double[]> pts, String colour, int left, int top, double pw,
                                 double ph, double maxNines, double maxUs) {
        if (pts.isEmpty()) {
            return;
        }
        b.append("<polyline fill=\"none\" stroke-width=\"2\" stroke=\"").append(colour).append("\" points=\"");
        for (double[] p : pts) {
            double x = left + Math.min(p[0], maxNines) / maxNines * pw;
            double y = top + ph - (maxUs > 0 ? p[1] / maxUs * ph : 0);
            b.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        }
        b.setLength(b.length() - 1);
        b.append("\"/>\n");
    }

    private static String table(List<CompareReport.CaseResult> rs) {
        StringBuilder b = new StringBuilder("<table>\n<tr><th>case</th><th>ours</th><th>raw</th><th>ratio ours/raw</th>"
                + "<th>cpu raw/ours</th><th>ours cpu us c/s</th><th>raw cpu us c/s</th><th>ours alloc B c/s</th>"
                + "<th>raw alloc B c/s</th></tr>\n");
        for (CompareReport.CaseResult r : rs) {
            Sample o = r.medianOurs();
            Sample w = r.medianRaw();
            Sample q = r.medianRatio();
            boolean lat = r.c.op() == CompareCase.Op.PINGPONG;
            b.append("<tr><td>").append(esc(r.c.name())).append("</td><td>")
                    .append(fmt(rate(r.c, o))).append(' ').append(rateUnit(r.c)).append("</td><td>")
                    .append(fmt(rate(r.c, w))).append(' ').append(rateUnit(r.c)).append("</td><td>")
                    .append(lat ? "p50 " + fmt(q.p50us()) + " / p99 " + fmt(q.p99us()) : fmt(q.rate()))
                    .append("</td><td>").append(fmt(r.medianCpuRatio())).append("</td><td>")
                    .append(fmt(o.cpuClientUs())).append(" / ").append(fmt(o.cpuServerUs())).append("</td><td>")
                    .append(fmt(w.cpuClientUs())).append(" / ").append(fmt(w.cpuServerUs())).append("</td><td>")
                    .append(fmt(o.allocClient())).append(" / ").append(fmt(o.allocServer())).append("</td><td>")
                    .append(fmt(w.allocClient())).append(" / ").append(fmt(w.allocServer())).append("</td></tr>\n");
        }
        return b.append("</table>\n").toString();
    }

    /** 1, 2 or 5 times a power of ten, at least {@code v}. */
    static double niceCeiling(double v) {
        if (!(v > 0)) {
            return 1;
        }
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 5, 10}) {
            if (m * p >= v) {
                return m * p;
            }
        }
        return 10 * p;
    }

    static String fmt(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "n/a";
        }
        double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
