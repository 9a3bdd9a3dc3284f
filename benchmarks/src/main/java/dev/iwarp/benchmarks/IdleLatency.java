package dev.iwarp.benchmarks;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code ping} against a serve holding idle connections, and the round-trip latency of one echoed Send against two serve processes, interleaved (A B A B ...): A a serve holding no
 * connection, B the serve holding the idle ones. Each round runs the iwarp-server jar's {@code bench --op send
 * --depth 1} (a ping: one message out, its echo back, the next only then) as a separate process, so A and B see
 * the same client; the figures are each round's p50 and p99, and their medians per server.
 */
final class IdleLatency {
    private static final Pattern FIELD = Pattern.compile("\"(t_typical_usec|t_p99_usec)\": ([0-9.]+)");

    private IdleLatency() {
    }

    /** Runs {@code rounds} A B pairs; returns false if any bench failed. */
    static boolean run(String java, String jar, String host, int idlePort, int heldPort, int rounds, int iterations,
                       List<String> benchExtra) throws Exception {
        List<double[]> a = new ArrayList<>();
        List<double[]> b = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            double[] ra = bench(java, jar, host, idlePort, iterations, benchExtra);
            double[] rb = bench(java, jar, host, heldPort, iterations, benchExtra);
            if (ra == null || rb == null) {
                return false;
            }
            a.add(ra);
            b.add(rb);
            System.out.printf("latency round %d: idle server p50 %.1f us p99 %.1f us; loaded server p50 %.1f us "
                    + "p99 %.1f us%n", r + 1, ra[0], ra[1], rb[0], rb[1]);
        }
        double a50 = median(a, 0);
        double b50 = median(b, 0);
        System.out.printf("latency medians over %d A B rounds of %d echoed 64-octet Sends: idle server p50 %.1f us "
                        + "p99 %.1f us; with the connections held p50 %.1f us p99 %.1f us (p50 ratio %.2f x)%n", rounds,
                iterations, a50, median(a, 1), b50, median(b, 1), b50 / a50);
        return true;
    }

    /** Runs the jar's {@code ping -C 3 -V} (its own process) and prints what it says; true when it answered. */
    static boolean ping(String java, String jar, String host, int port, List<String> extra) throws Exception {
        if (!Files.exists(Path.of(jar))) {
            System.out.println("no ping: " + jar + " not found (build it, or give --ping-jar)");
            return false;
        }
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", jar, "ping", host + ":" + port, "-C", "3", "-V"));
        cmd.addAll(extra);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                System.out.println("  ping: " + line);
            }
        }
        boolean ended = p.waitFor(120, TimeUnit.SECONDS);
        boolean ok = ended && p.exitValue() == 0;
        System.out.println(ok ? "ping answered while the connections were held"
                : "ping FAILED while the connections were held" + (ended ? " (exit " + p.exitValue() + ")" : ""));
        if (!ended) {
            p.destroyForcibly();
        }
        return ok;
    }

    private static double[] bench(String java, String jar, String host, int port, int iterations,
                                  List<String> extra) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", jar, "bench", "--op", "send", "--size", "64",
                "--depth", "1", "--iterations", Integer.toString(iterations), "--warmup",
                Integer.toString(Math.max(100, iterations / 5)), "--output", "json"));
        cmd.addAll(extra);
        cmd.add(host + ":" + port);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        double p50 = -1;
        double p99 = -1;
        StringBuilder all = new StringBuilder();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                all.append("  bench: ").append(line).append('\n');
                Matcher m = FIELD.matcher(line);
                while (m.find()) {
                    if (m.group(1).equals("t_typical_usec")) {
                        p50 = Double.parseDouble(m.group(2));
                    } else {
                        p99 = Double.parseDouble(m.group(2));
                    }
                }
            }
        }
        boolean ended = p.waitFor(300, TimeUnit.SECONDS);
        if (!ended || p.exitValue() != 0 || p50 < 0 || p99 < 0) {
            System.out.print(all);
            System.out.println("bench against port " + port + " FAILED" + (ended ? " (exit " + p.exitValue() + ")"
                    : " (no end in 300 s)"));
            p.destroyForcibly();
            return null;
        }
        return new double[] {p50, p99};
    }

    static double median(List<double[]> rounds, int i) {
        double[] v = rounds.stream().mapToDouble(r -> r[i]).toArray();
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }
}
