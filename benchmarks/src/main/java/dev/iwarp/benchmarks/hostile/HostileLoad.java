package dev.iwarp.benchmarks.hostile;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * The attacker of interop/hostile-load.sh: runs one attack against a running {@code serve} (a separate process),
 * and while the attack is on, runs the packaged jar's {@code ping} as a legitimate client and measures serve (live
 * heap after a full GC, JDK direct buffers, VmRSS, CPU per attacker input). Prints one {@code hostile-figures} line
 * for the script, which checks the memory and log bounds, and one line per bound the attack checks itself (a
 * connection serve should have closed, a limit it should have kept). Exit 0 when the ping completed and every bound
 * held, 1 otherwise. Uses only loopback source addresses outside 127.0.0.0/24, so the ping (from 127.0.0.1) is never
 * in an attacker's prefix.
 */
@Command(name = "hostile-load", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Run one hostile-peer attack against a running serve while a legitimate ping runs.")
public final class HostileLoad implements Callable<Integer> {
    @Option(names = "--attack", required = true, description = "ird0-adverts, commit-memory, per-prefix, zero-writes, "
            + "partial-fpdu, markers, read-rate, tls-flood or log-flood.")
    String attack;
    @Option(names = "--host", description = "serve's address. Default ${DEFAULT-VALUE}.")
    String host = "127.0.0.1";
    @Option(names = "--port", required = true, description = "serve's port.")
    int port;
    @Option(names = "--pid", required = true, description = "serve's process id.")
    long pid;
    @Option(names = "--ping-jar", required = true, description = "The iwarp-server jar whose ping runs meanwhile.")
    String pingJar;
    @Option(names = "--ping-arg", description = "An extra argument for ping (repeat), e.g. --tls.")
    List<String> pingArgs = new ArrayList<>();
    @Option(names = "--seconds", description = "How long timed attacks run before the ping. Default ${DEFAULT-VALUE}.")
    int seconds = 5;
    @Option(names = "--connections", description = "commit-memory: connections. Default ${DEFAULT-VALUE}.")
    int connections = 150;
    // serve's settings, for the bounds the attacker checks itself (0: not set, not checked)
    @Option(names = "--max-per-source") int maxPerSource;
    @Option(names = "--first-octet-timeout") long firstOctetTimeoutMs = 2000;
    @Option(names = "--idle-timeout") long idleTimeoutSec;
    @Option(names = "--drain-timeout") long drainTimeoutSec;
    @Option(names = "--message-deadline") long messageDeadlineMs;
    @Option(names = "--read-rate") long readRate;
    @Option(names = "--tls-handshake-rate") int tlsHandshakeRate;

    public static void main(String[] args) {
        System.exit(new CommandLine(new HostileLoad()).execute(args));
    }

    private Attack attack() {
        return switch (attack) {
            case "ird0-adverts" -> new MemoryAttacks.Ird0Advertisements(this);
            case "commit-memory" -> new MemoryAttacks.CommitMemory(this);
            case "markers" -> new MemoryAttacks.LargeReads(this, true);
            case "read-rate" -> new MemoryAttacks.LargeReads(this, false);
            case "per-prefix" -> new LimitAttacks.PerPrefix(this);
            case "zero-writes" -> new TimerAttacks.ZeroLengthWrites(this);
            case "partial-fpdu" -> new TimerAttacks.PartialFpdu(this);
            case "tls-flood" -> new LimitAttacks.TlsFlood(this);
            case "log-flood" -> new LimitAttacks.LogFlood(this);
            default -> throw new CommandLine.ParameterException(new CommandLine(this), "unknown attack " + attack);
        };
    }

    @Override
    public Integer call() throws Exception {
        Attack a = attack();
        List<String> failed = new ArrayList<>();
        long ticks0 = ServeMeter.cpuTicks(pid);
        long t0 = System.nanoTime();
        try (ServeMeter meter = new ServeMeter(pid)) {
            try {
                a.start();
            } catch (Exception e) {
                failed.add("the attack could not start: " + e);
            }
            String ping = ping();
            if (ping != null) {
                failed.add("the legitimate ping failed during the attack: " + ping);
            }
            // serve's CPU and the attacker's inputs over the same window, the attack's build-up and the ping
            long inputs = a.inputs.get();
            long ticks = ServeMeter.cpuTicks(pid) - ticks0;
            double attackSec = (System.nanoTime() - t0) / 1e9;
            ServeMeter.Reading r = meter.read(30);
            probe();
            failed.addAll(a.finish());
            System.out.printf("hostile-figures attack=%s heap_after_gc_kib=%d direct_kib=%d rss_kib=%d inputs=%d "
                            + "input=%s attack_s=%.1f serve_cpu_ms=%d cpu_us_per_input=%.0f alive=%s %s%s%n", attack,
                    kib(r.heapBytes()), kib(r.directBytes()), kib(r.rssBytes()), inputs,
                    a.inputName() == null ? "n/a" : a.inputName().replace(' ', '_'),
                    attackSec, ticks * 10, inputs == 0 || a.inputName() == null ? 0.0 : ticks * 10_000.0 / inputs,
                    ServeMeter.alive(pid),
                    a.figures(), r.problem() == null ? "" : " measure_problem=\"" + r.problem() + "\"");
        }
        for (String f : failed) {
            System.out.println("hostile " + attack + ": FAIL: " + f);
        }
        return failed.isEmpty() ? 0 : 1;
    }

    private static long kib(long bytes) {
        return bytes < 0 ? -1 : bytes / 1024;
    }

    /** Runs the jar's ping; null if it completed, else what went wrong (with its last lines). */
    private String ping() throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", pingJar, "ping", host + ":" + port, "-C", "3", "-V",
                "--timeout", "10000"));
        cmd.addAll(pingArgs);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        List<String> lines = new ArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    synchronized (lines) {
                        lines.add(line);
                    }
                }
            } catch (java.io.IOException ignored) {
                // ended
            }
        });
        reader.start();
        long t = System.nanoTime();
        boolean ended = p.waitFor(30, TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly();
        }
        reader.join(2000);
        System.out.printf("hostile %s: ping %s in %.1f s%n", attack, ended ? "exited " + p.exitValue() : "timed out",
                (System.nanoTime() - t) / 1e9);
        if (ended && p.exitValue() == 0) {
            return null;
        }
        synchronized (lines) {
            List<String> tail = lines.subList(Math.max(0, lines.size() - 3), lines.size());
            return (ended ? "exit " + p.exitValue() : "no answer in 30 s") + ": " + String.join(" | ", tail);
        }
    }

    /**
     * One plain connection after the full GC: serve allocates for it, which makes Netty's leak detector report
     * buffers that the GC found unreleased.
     */
    private void probe() {
        try (Socket s = RawIwarp.connect(new java.net.InetSocketAddress(host, port), null, 3000)) {
            s.setSoTimeout(3000);
            RawIwarp.startup(s, 1, 1, false);
        } catch (Exception e) {
            // the ping said whether serve answers
        }
    }
}
