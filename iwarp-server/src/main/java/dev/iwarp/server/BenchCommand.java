package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.ClientWire;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** {@code bench HOST[:PORT]}: throughput and latency of Writes, Reads or echoed Sends against {@code serve}. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "RDMA Write/Read to serve's advertised target region, or Sends it echoes; prints throughput and latency.")
final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "HOST[:PORT]", description = "Server (default port 7174, with --wire vitcp 7175).")
    String target;

    @Mixin
    WireOptions wire = new WireOptions();

    @Option(names = "--op", description = "write, read or send (default: ${DEFAULT-VALUE}).")
    Bench.Op op = Bench.Op.write;

    @Option(names = "--size", description = "Octets per operation (default: ${DEFAULT-VALUE}).")
    int size = 65536;

    @Option(names = "--iterations", description = "Operations (default: ${DEFAULT-VALUE}).")
    long iterations = 10_000;

    @Option(names = "--duration", paramLabel = "SECONDS", description = "Run this long instead of --iterations.")
    double durationSec;

    @Option(names = "--depth", description = "Operations outstanding; send always 1 (default: ${DEFAULT-VALUE}).")
    int depth = 16;

    @Option(names = "--crc", description = "Ask for MPA CRC (C=1); VI/TCP: send the CRC option.")
    boolean crc;

    @Option(names = "--connections", description = "Connections run at once, each with --iterations (default: ${DEFAULT-VALUE}).")
    int connections = 1;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if (connections < 1) {
            spec.commandLine().getErr().println("bench: --connections must be >= 1");
            return 2;
        }
        if (wire.sctp()) {
            wire.sctp.framing(true); // no SCTP on this machine: one line, exit 2 (not a failed run)
        }
        ExecutorService pool = Executors.newFixedThreadPool(connections);
        try (IwarpStack stack = wire.vitcp() ? null : IwarpStack.builder().threads(Math.min(connections, 2)).build();
             ClientWire client = wire.clientWire(stack, Math.min(connections, 2))) {
            InetSocketAddress server = PingCommand.parse(target, wire.defaultPort());
            AtomicLong progress = new AtomicLong();
            // a live progress line only on a terminal
            Meter meter = new Meter(progress, System.console() != null ? out : null);
            List<Future<Bench.Result>> runs = new ArrayList<>();
            for (int c = 0; c < connections; c++) {
                runs.add(pool.submit(() -> Bench.run(client, server, op, size, iterations, (long) (durationSec * 1e9),
                        depth, crc, 10_000, progress)));
            }
            List<Bench.Result> results = new ArrayList<>();
            try {
                for (Future<Bench.Result> f : runs) {
                    results.add(f.get());
                }
            } finally {
                meter.stop();
            }
            print(Bench.Result.merge(results), connections, meter.peakGbitPerSecond(), out);
            return 0;
        } catch (ExecutionException e) {
            spec.commandLine().getErr().println("bench: " + e.getCause().getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("bench: " + e.getMessage());
            return 1;
        } finally {
            pool.shutdownNow();
        }
    }

    static void print(Bench.Result r, PrintWriter out) {
        print(r, 1, Double.NaN, out);
    }

    static void print(Bench.Result r, int connections, double peakGbit, PrintWriter out) {
        out.printf("bench %s: %d octets x %d, depth %d, %d connection(s), %s%n", r.op(), r.size(),
                r.iterations(), r.depth(), connections, r.summary());
        out.printf("  bytes %d, iterations %d, %.3f s%n", r.bytes(), r.iterations(), r.nanos() / 1e9);
        out.printf("  %.3f Gbit/s average%s, %.0f messages/s%n", r.gbitPerSecond(),
                Double.isNaN(peakGbit) ? "" : String.format(", %.3f Gbit/s peak (250 ms)", peakGbit),
                r.messagesPerSecond());
        Histogram h = r.latency();
        out.printf("  latency us: p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f%n", us(h.getValueAtPercentile(50)),
                us(h.getValueAtPercentile(90)), us(h.getValueAtPercentile(99)), us(h.getValueAtPercentile(99.9)),
                us(h.getMaxValue()));
    }

    private static double us(long nanos) {
        return nanos / (double) TimeUnit.MICROSECONDS.toNanos(1);
    }
}
