package dev.iwarp.benchmarks.compare;

import dev.iwarp.bootstrap.Transport;
import io.netty.util.ResourceLeakDetector;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where one {@code compare} case spends its CPU, one side at a time (ours, then raw Netty), over the measured window
 * only: a JFR recording of that window (the JDK's "profile" settings, Java and native samples every 2 ms) and every
 * thread's user and system CPU from {@code /proc/self/task} (event loops, JIT compiler threads, GC threads and the
 * rest, per message). System time is the kernel's share: on loopback the sender's {@code writev} also runs the
 * receiving side of TCP. The JFR files are for {@code jfr-categories.py} or {@code jfr-shares.py}; run with
 * {@code -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints} so samples land on the right line.
 *
 * <pre>java -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -cp benchmarks.jar \
 *     dev.iwarp.benchmarks.compare.CaseProfile write-1k-crc/epoll [warm-up s (5) [seconds (4) [directory (.)]]]</pre>
 */
public final class CaseProfile {
    private CaseProfile() {
    }

    public static void main(String[] args) throws Exception {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        String name = args[0];
        double warmup = args.length > 1 ? Double.parseDouble(args[1]) : 5;
        double seconds = args.length > 2 ? Double.parseDouble(args[2]) : 4;
        Path dir = Path.of(args.length > 3 ? args[3] : ".");
        CompareCase c = CompareCase.all(List.of(Transport.EPOLL, Transport.NIO, Transport.IO_URING)).stream()
                .filter(k -> k.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no case " + name));
        Map<String, String> settings = new HashMap<>(Configuration.getConfiguration("profile").getSettings());
        settings.put("jdk.ExecutionSample#period", "2 ms");
        settings.put("jdk.NativeMethodSample#period", "2 ms");
        try (Recording jfrStartUp = new Recording(settings)) { // JFR's own start-up, outside the measured windows
            jfrStartUp.start();
            Thread.sleep(200);
            jfrStartUp.stop();
        }
        for (String side : List.of("ours", "raw")) {
            System.out.print(profile(c, side, warmup, seconds, settings, dir));
        }
    }

    /** One side: warm-up, then the recorded window; returns the report's lines. */
    @SuppressWarnings("try") // CompareRun.close() waits for the event loops to stop, so it may be interrupted
    static String profile(CompareCase c, String side, double warmup, double seconds, Map<String, String> settings,
                          Path dir) throws Exception {
        StringBuilder sb = new StringBuilder();
        try (CompareRun run = side.equals("ours") ? new OursRun(c) : new RawRun(c)) {
            run.open();
            String clientTid = CompareRun.linuxTid(run.clientLoop);
            String serverTid = CompareRun.linuxTid(run.serverLoop);
            String clientName = CompareRun.threadOf(run.clientLoop).getName();
            String serverName = CompareRun.threadOf(run.serverLoop).getName();
            run.start();
            Thread.sleep((long) (warmup * 1000));
            Map<String, long[]> t0 = threadTicks();
            long m0 = run.messages();
            long n0 = System.nanoTime();
            Path jfr = dir.resolve(c.name().replace('/', '_') + "-" + side + ".jfr");
            try (Recording r = new Recording(settings)) {
                r.start();
                Thread.sleep((long) (seconds * 1000));
                r.stop();
                long m1 = run.messages();
                long n1 = System.nanoTime();
                Map<String, long[]> t1 = threadTicks();
                run.stopped = true;
                r.dump(jfr);
                double messages = m1 - m0;
                sb.append(String.format("%s %s: %.0f messages/s over %.2f s, load average %s; JFR %s (loops: client "
                                + "%s, server %s)%n", c.name(), side, messages / ((n1 - n0) / 1e9), (n1 - n0) / 1e9,
                        Compare.loadAverage(), jfr, clientName, serverName));
                Map<String, long[]> groups = new TreeMap<>();
                for (Map.Entry<String, long[]> e : t1.entrySet()) {
                    long[] before = t0.getOrDefault(e.getKey(), new long[2]);
                    String tid = e.getKey().substring(0, e.getKey().indexOf(' '));
                    String group = tid.equals(clientTid) ? "client event loop" : tid.equals(serverTid)
                            ? "server event loop" : threadGroup(e.getKey().substring(e.getKey().indexOf(' ') + 1));
                    long[] g = groups.computeIfAbsent(group, k -> new long[2]);
                    g[0] += e.getValue()[0] - before[0];
                    g[1] += e.getValue()[1] - before[1];
                }
                for (Map.Entry<String, long[]> g : groups.entrySet()) {
                    // /proc's ticks are 10 ms
                    sb.append(String.format("  %-18s user %6d ms  system %6d ms  = %8.3f + %8.3f us per message%n",
                            g.getKey(), g.getValue()[0] * 10, g.getValue()[1] * 10,
                            g.getValue()[0] * 1e4 / messages, g.getValue()[1] * 1e4 / messages));
                }
            }
        }
        return sb.toString();
    }

    static String threadGroup(String comm) {
        if (comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler")) {
            return "JIT compilers";
        }
        if (comm.startsWith("GC ") || comm.startsWith("G1 ")) {
            return "GC";
        }
        return "other threads";
    }


    /** "tid comm" of every thread of this process, with its user and system CPU in clock ticks. */
    static Map<String, long[]> threadTicks() throws Exception {
        Map<String, long[]> out = new HashMap<>();
        try (var tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (java.io.IOException gone) {
                    continue;
                }
                // proc(5): pid (comm) state ... utime stime are fields 14 and 15; comm may hold spaces
                int open = stat.indexOf('(');
                int close = stat.lastIndexOf(')');
                String[] f = stat.substring(close + 2).split(" ");
                out.put(task.getFileName() + " " + stat.substring(open + 1, close),
                        new long[]{Long.parseLong(f[11]), Long.parseLong(f[12])});
            }
        }
        return out;
    }
}
