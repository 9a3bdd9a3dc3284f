package dev.iwarp.server;

import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.server.perftest.PerftestRun;
import dev.iwarp.server.perftest.PerftestSettings;
import dev.iwarp.server.perftest.PerftestTest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.concurrent.Callable;

/**
 * perftest's {@code ib_write_bw}, {@code ib_read_bw}, {@code ib_send_bw}, {@code ib_write_lat}, {@code ib_read_lat}
 * and {@code ib_send_lat} with RDMA-CM ({@code -R}): named and optioned as perftest's own, server without a host,
 * client with one; they run against stock perftest over iWARP (siw, RNICs) in both roles.
 */
abstract class PerftestCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    HelpOption help;

    @Parameters(arity = "0..1", paramLabel = "HOST", description = "Server to connect to (client mode); none: be the server.")
    String host;

    @Option(names = {"-R", "--rdma_cm"}, description = "Connect with RDMA-CM (required: the only mode over iWARP).")
    boolean rdmaCm;

    @Option(names = {"-p", "--port"}, description = "Port (default: ${DEFAULT-VALUE}).")
    @Range(min = 1, max = 65535)
    int port = 18515;

    @Option(names = "--bind", paramLabel = "ADDRESS", description = "Server: address to listen on (default: ${DEFAULT-VALUE}).")
    String bind = "0.0.0.0";

    @Option(names = {"-s", "--size"}, description = "Message size in octets (default: 65536 bandwidth, 2 latency). A "
            + "server must be given the client's size, or a larger one: it is not exchanged.")
    @Range(min = 1, max = 1 << 23)
    Integer size;

    @Option(names = {"-n", "--iters"}, description = "Iterations (default: 5000 ib_write_bw, 1000 otherwise).")
    @Range(min = 1, max = 100_000_000)
    Long iterations;

    @Option(names = {"-D", "--duration"}, paramLabel = "SECONDS", description = "Run this long instead of -n "
            + "(ib_write_bw, ib_read_bw, ib_read_lat).")
    @Range(min = 1, max = 86_400)
    int duration;

    @Option(names = {"-a", "--all"}, description = "Every size from 2 to 2^23 octets (both sides ours: the size "
            + "sequence is not part of perftest's protocol).")
    boolean all;

    @Option(names = {"-t", "--tx-depth"}, description = "Messages in flight (default: 128 bandwidth, clipped to -n; 1 latency).")
    @Range(min = 1, max = 8192)
    Integer txDepth;

    @Option(names = {"-r", "--rx-depth"}, description = "Receives posted, send tests (default: -n up to 512, even).")
    @Range(min = 2, max = 8192)
    Integer rxDepth;

    @Option(names = {"-q", "--qp"}, description = "Data connections (bandwidth tests; default: ${DEFAULT-VALUE}).")
    @Range(min = 1, max = 64)
    int qps = 1;

    @Option(names = {"-o", "--outs"}, description = "Outstanding RDMA Reads: the MPA IRD/ORD of the data connection "
            + "(read tests; default: ${DEFAULT-VALUE}).")
    @Range(min = 1, max = 128)
    int outReads = 128;

    @Option(names = "--report_gbits", description = "Bandwidth in Gb/s instead of MB/s (MB = 2^20 octets).")
    boolean reportGbits;

    @Option(names = {"-F", "--CPU-freq"}, description = "Accepted and ignored (we time with the JVM's nanosecond clock).")
    boolean cpuFreq;

    @Option(names = {"-d", "--ib-dev"}, paramLabel = "DEVICE", description = "Accepted and ignored (the device is this "
            + "process's own iWARP stack).")
    String device;

    @Option(names = "--timeout", paramLabel = "MS", description = "Longest wait for any message or completion from "
            + "the peer (default: ${DEFAULT-VALUE}).")
    @Range(min = 1)
    long timeoutMs = 20_000;

    @Mixin
    TlsOptions tls = new TlsOptions();

    abstract PerftestTest test();

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        String name = test().command();
        if (!rdmaCm) {
            err.println(name + ": only RDMA-CM mode is supported: add -R (on both sides)");
            return CommandLineChecks.EXIT_USAGE;
        }
        if (duration > 0 && !(test() == PerftestTest.WRITE_BW || test() == PerftestTest.READ_BW
                || test() == PerftestTest.READ_LAT)) {
            err.println(name + ": -D is supported by ib_write_bw, ib_read_bw and ib_read_lat "
                    + "(the other tests' receivers must know the count)");
            return CommandLineChecks.EXIT_USAGE;
        }
        if (duration > 0 && all) {
            err.println(name + ": -D and -a exclude each other");
            return CommandLineChecks.EXIT_USAGE;
        }
        if (qps > 1 && !test().bandwidth()) {
            err.println(name + ": latency tests use one QP: -q must be 1");
            return CommandLineChecks.EXIT_USAGE;
        }
        TlsSettings tlsSettings;
        InetSocketAddress address;
        try {
            tls.check(false);
            tlsSettings = tls.enabled() ? (host != null ? tls.client(false) : tls.server(false)) : null;
            address = host != null ? new InetSocketAddress(InetAddress.getByName(host), port)
                    : new InetSocketAddress(InetAddress.getByName(bind), port);
        } catch (IllegalArgumentException | UnknownHostException e) {
            err.println(name + ": " + e.getMessage());
            return CommandLineChecks.EXIT_USAGE;
        }
        long n = iterations != null ? iterations : test().defaultIterations();
        int tx = txDepth != null ? txDepth : test().defaultTxDepth(n);
        int rx = rxDepth != null ? rxDepth : PerftestTest.defaultRxDepth(n);
        int s = size != null ? size : test().defaultSize();
        PerftestSettings settings = new PerftestSettings(test(), host != null, address, s, n, duration, all, tx, rx,
                qps, outReads, reportGbits, timeoutMs, tlsSettings);
        return new PerftestRun(settings, spec.commandLine().getOut(), err).run();
    }

    @Command(name = "ib_write_bw", description = "perftest ib_write_bw -R: RDMA Write bandwidth; server without HOST.")
    static final class WriteBw extends PerftestCommand {
        @Override
        PerftestTest test() {
            return PerftestTest.WRITE_BW;
        }
    }

    @Command(name = "ib_read_bw", description = "perftest ib_read_bw -R: RDMA Read bandwidth; server without HOST.")
    static final class ReadBw extends PerftestCommand {
        @Override
        PerftestTest test() {
            return PerftestTest.READ_BW;
        }
    }

    @Command(name = "ib_send_bw", description = "perftest ib_send_bw -R: Send bandwidth, with perftest's credit "
            + "Writes; server without HOST.")
    static final class SendBw extends PerftestCommand {
        @Override
        PerftestTest test() {
            return PerftestTest.SEND_BW;
        }
    }

    @Command(name = "ib_write_lat", description = "perftest ib_write_lat -R: RDMA Write ping-pong latency; server "
            + "without HOST.")
    static final class WriteLat extends PerftestCommand {
        @Override
        PerftestTest test() {
            return PerftestTest.WRITE_LAT;
        }
    }

    @Command(name = "ib_read_lat", description = "perftest ib_read_lat -R: RDMA Read latency; server without HOST.")
    static final class ReadLat extends PerftestCommand {
        @Override
        PerftestTest test() {
            return PerftestTest.READ_LAT;
        }
    }

    @Command(name = "ib_send_lat", description = "perftest ib_send_lat -R: Send ping-pong latency; server without HOST.")
    static final class SendLat extends PerftestCommand {
        @Override
        PerftestTest test() {
            return PerftestTest.SEND_LAT;
        }
    }
}
