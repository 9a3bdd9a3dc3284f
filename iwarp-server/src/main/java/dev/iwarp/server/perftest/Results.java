package dev.iwarp.server.perftest;

import java.io.PrintWriter;
import java.util.Arrays;
import java.util.Locale;

/** perftest's output: the header block, the bandwidth and latency tables, in its column layout. */
final class Results {
    static final String LINE = "---------------------------------------------------------------------------------------";
    private static final double MB = 1 << 20;

    private Results() {
    }

    /** One bandwidth result: what the report messages carry. */
    record Bandwidth(long size, long iterations, double peak, double average, double msgRate) {
        /** From {@code messages} of {@code size} octets over {@code seconds}, peak over the best window. */
        static Bandwidth of(long size, long iterations, long messages, double seconds, double peakMessagesPerSec,
                            boolean gbits) {
            double rate = seconds > 0 ? messages / seconds : 0;
            double peakRate = Math.max(rate, peakMessagesPerSec);
            return new Bandwidth(size, iterations, unit(peakRate * size, gbits), unit(rate * size, gbits), rate / 1e6);
        }

        private static double unit(double bytesPerSec, boolean gbits) {
            return gbits ? bytesPerSec * 8 / 1e9 : bytesPerSec / MB;
        }
    }

    static void header(PrintWriter out, PerftestSettings s, int mtu, int txDepth) {
        out.println(LINE);
        out.println("                    " + s.test().title());
        out.println(" Dual-port       : OFF\t\tDevice         : iwarp-netty");
        out.println(" Number of qps   : " + s.qps() + "\t\tTransport type : IW");
        out.println(" Connection type : RC\t\tUsing SRQ      : OFF");
        out.println(" TX depth        : " + txDepth);
        if (s.test() == PerftestTest.SEND_BW || s.test() == PerftestTest.SEND_LAT) {
            out.println(" RX depth        : " + s.rxDepth());
        }
        out.println(" Mtu             : " + mtu + "[B]");
        out.println(" Link type       : Ethernet");
        if (s.test().op() == PerftestTest.Op.READ) {
            out.println(" Outstand reads  : " + s.outReads());
        } else {
            out.println(" Max inline data : 0[B]");
        }
        out.println(" rdma_cm QPs\t : ON");
        out.println(" Data ex. method : rdma_cm");
        out.println(LINE);
    }

    static void addresses(PrintWriter out, PingpongDest local, PingpongDest remote) {
        out.println(local.describe("local"));
        out.println(remote.describe("remote"));
        out.println(LINE);
    }

    static void bandwidthTitle(PrintWriter out, boolean gbits) {
        String u = gbits ? "Gb/sec" : "MB/sec";
        out.println(" #bytes     #iterations    BW peak[" + u + "]    BW average[" + u + "]   MsgRate[Mpps]");
    }

    static String bandwidthLine(Bandwidth b) {
        return String.format(Locale.ROOT, " %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f",
                b.size(), b.iterations(), b.peak(), b.average(), b.msgRate());
    }

    static void latencyTitle(PrintWriter out) {
        out.println(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
                + "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ");
    }

    /** The latency line from samples in nanoseconds; {@code halve}: half round trips (write_lat, send_lat). */
    static String latencyLine(long size, long iterations, long[] samplesNs, int count, boolean halve) {
        double[] us = new double[Math.max(count, 1)];
        for (int i = 0; i < count; i++) {
            us[i] = samplesNs[i] / 1e3 / (halve ? 2 : 1);
        }
        int n = count;
        Arrays.sort(us, 0, n);
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += us[i];
        }
        double avg = n > 0 ? sum / n : 0;
        double var = 0;
        for (int i = 0; i < n; i++) {
            var += (us[i] - avg) * (us[i] - avg);
        }
        double stdev = n > 1 ? Math.sqrt(var / n) : 0;
        return String.format(Locale.ROOT, " %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f",
                size, iterations, n > 0 ? us[0] : 0, n > 0 ? us[n - 1] : 0, n > 0 ? us[n / 2] : 0, avg, stdev,
                percentile(us, n, 0.99), percentile(us, n, 0.999));
    }

    private static double percentile(double[] sorted, int n, double p) {
        if (n == 0) {
            return 0;
        }
        return sorted[Math.min(n - 1, (int) Math.ceil(p * n) - 1)];
    }
}
