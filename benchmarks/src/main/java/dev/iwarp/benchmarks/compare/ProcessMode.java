package dev.iwarp.benchmarks.compare;

import dev.iwarp.benchmarks.compare.Compare.Sample;
import dev.iwarp.bootstrap.Transport;

import java.io.PrintStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** {@code compare --processes}: the rounds, the report and, with {@code --smoke}, the check of every column. */
final class ProcessMode {
    private ProcessMode() {
    }

    static int run(Compare o, List<Transport> transports, PrintStream out) throws Exception {
        String loadBefore = Compare.loadAverage();
        String machine = Compare.cpuModel() + ", " + Runtime.getRuntime().availableProcessors() + " cores, Java "
                + System.getProperty("java.version");
        ProcessCompare pc = new ProcessCompare(o.serveJar, o.processWarmup, o.warmupMax, o.seconds, out);
        pc.rawRead = o.rawReadMode;
        if (o.cqMod < 1 || o.cqMod > 1024) {
            throw new IllegalArgumentException("--cq-mod must be 1..1024: " + o.cqMod);
        }
        pc.cqMod = o.cqMod;
        if (!o.json) {
            out.printf(Locale.ROOT, "compare --processes: %d round(s) of %s + %.1f s per side, every "
                    + "side its own JVM%nmachine: %s%nload average before: %s%n", o.rounds, pc.warmupRule(), o.seconds,
                    machine, loadBefore);
            out.println("serve runs with --read-rate 0 (the raw peer has no Read Response budget) and "
                    + "--max-per-source 0 (compare is its only client)");
            if (!o.connections.equals(List.of(1))) {
                out.println("every case on " + o.connections + " connection(s) at once, both sides; rates are "
                        + "aggregates, depth is per connection");
            }
            if (o.cqMod > 1) {
                out.println("bench posts one request in " + o.cqMod + " signaled (--cq-mod; a burst's last too)");
            }
            out.println(o.rawReadLine());
            out.println("cpu and alloc per message per process (c/s = client/server process, all threads)");
        }
        Thread cleanup = new Thread(pc::stopServers, "compare-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        List<CompareReport.CaseResult> results = new ArrayList<>();
        List<String> smokeFailures = new ArrayList<>();
        try {
            for (Transport t : transports) {
                List<CompareCase> cases = ProcessCompare.cases(t, o.connections).stream()
                        .filter(c -> o.only.isEmpty() || o.only.stream().anyMatch(s -> c.name().contains(s))).toList();
                if (cases.isEmpty()) {
                    continue;
                }
                int[] ports = pc.startServers(t);
                try {
                    for (CompareCase c : cases) {
                        CompareReport.CaseResult r = new CompareReport.CaseResult(c);
                        for (int i = 0; i < o.rounds; i++) {
                            Sample ours = pc.ours(c, ports[0]);
                            Sample raw = pc.raw(c, ports[1]);
                            r.add(ours, raw);
                            if (!o.json) {
                                out.println(CompareReport.roundLine(c, i + 1, ours, raw));
                            }
                        }
                        results.add(r);
                        if (!o.json) {
                            out.println(CompareReport.medianLine(r));
                        }
                        String missing = ProcessCompare.missingColumns(r);
                        if (o.smoke && missing != null) {
                            smokeFailures.add(c.name() + ": " + missing);
                        }
                    }
                } finally {
                    pc.stopServers();
                }
            }
        } finally {
            pc.stopServers();
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs
            }
        }
        String loadAfter = Compare.loadAverage();
        String doc = CompareReport.json(results, o.rounds, o.processWarmup.equals("stable") ? o.warmupMax
                : Double.parseDouble(o.processWarmup), o.seconds, loadBefore, loadAfter);
        doc = o.withRawRead(doc);
        doc = "{\"mode\":\"processes\",\"warmup\":\"" + pc.warmupRule() + "\",\"machine\":\""
                + machine.replace("\"", "'") + "\"," + doc.substring(1);
        if (o.jsonOut != null) {
            Files.writeString(o.jsonOut, doc + System.lineSeparator());
        }
        if (o.json) {
            out.println(doc);
        } else {
            out.println();
            out.println(CompareReport.summary(results, true));
            out.printf("machine: %s%nload average before %s, after %s%n", machine, loadBefore, loadAfter);
            if (pc.warmupOutcome() != null) {
                out.println(pc.warmupOutcome());
            }
        }
        if (o.smoke) {
            if (!smokeFailures.isEmpty()) {
                System.err.println("compare --processes --smoke: columns missing: " + String.join("; ", smokeFailures));
                return 1;
            }
            if (!o.json) {
                out.printf("smoke: %d case(s) ran, every column printed on both sides%n", results.size());
            }
        }
        return results.stream().anyMatch(CompareReport.CaseResult::failed) ? 1 : 0;
    }
}
