package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** {@code bench HOST[:PORT]}: throughput and latency of Writes, Reads or echoed Sends against {@code serve}. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "RDMA Write/Read to serve's advertised target region, or Sends it echoes; prints throughput and latency.")
final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "HOST[:PORT]", description = "Server (default port 7174).")
    String target;

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

    @Option(names = "--crc", description = "Ask for MPA CRC (C=1).")
    boolean crc;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (IwarpStack stack = IwarpStack.builder().threads(1).build()) {
            Bench.Result r = Bench.run(stack, PingCommand.parse(target), op, size, iterations,
                    (long) (durationSec * 1e9), depth, crc, 10_000);
            print(r, out);
            return 0;
        } catch (IOException | IllegalArgumentException e) {
            spec.commandLine().getErr().println("bench: " + e.getMessage());
            return 1;
        }
    }

    static void print(Bench.Result r, PrintWriter out) {
        out.printf("bench %s: %d octets x %d, depth %d, MPA Rev %d CRC %s%n", r.op(), r.size(), r.iterations(),
                r.depth(), r.mpa().revision(), r.mpa().crc() ? "on" : "off");
        out.printf("  bytes %d, iterations %d, %.3f s%n", r.bytes(), r.iterations(), r.nanos() / 1e9);
        out.printf("  %.3f Gbit/s, %.0f messages/s%n", r.gbitPerSecond(), r.messagesPerSecond());
        Histogram h = r.latency();
        out.printf("  latency us: p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f%n", us(h.getValueAtPercentile(50)),
                us(h.getValueAtPercentile(90)), us(h.getValueAtPercentile(99)), us(h.getValueAtPercentile(99.9)),
                us(h.getMaxValue()));
    }

    private static double us(long nanos) {
        return nanos / (double) TimeUnit.MICROSECONDS.toNanos(1);
    }
}
