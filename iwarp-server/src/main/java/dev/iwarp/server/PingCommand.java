package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.ClientWire;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.Callable;

/**
 * {@code ping HOST[:PORT]} or {@code ping -a HOST -p PORT}: an rping client (rdma-core's rping.c) against
 * {@code serve} or {@code rping -s}, or over VI/TCP against {@code serve --wire vitcp}. Its {@code -v} and
 * {@code -V} are rping's: display the ping data, validate it.
 */
@Command(name = "ping",
        description = "rping-compatible client: the server RDMA Reads our ping data and RDMA Writes it back.")
final class PingCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    HelpOption help;

    @Mixin
    ToolLogging log = new ToolLogging();

    @Parameters(paramLabel = "HOST[:PORT]", arity = "0..1",
            description = "Server (default port 7174, --wire vitcp 7175, --wire ift 7176); or give -a and -p.")
    String target;

    @Option(names = "-a", paramLabel = "HOST", description = "Server address, as rping's -a.")
    String address;

    @Option(names = "-p", paramLabel = "PORT", description = "Server port, as rping's -p (1..65535).")
    @Range(min = HostPort.MIN_PORT, max = HostPort.MAX_PORT)
    Integer port;

    @Mixin
    WireOptions wire = new WireOptions();

    @Option(names = "-C", paramLabel = "COUNT", description = "Number of pings (default: ${DEFAULT-VALUE}).")
    @Range(min = 1)
    int count = 10;

    @Option(names = "-S", paramLabel = "SIZE", description = "Ping buffer size, 26..65535 (default: ${DEFAULT-VALUE}).")
    @Range(min = RpingClient.MIN_SIZE, max = RpingClient.MAX_SIZE)
    int size = 64;

    @Option(names = "-v", description = "Display each ping's data (rping's \"ping data: ...\").")
    boolean display;

    @Option(names = "-V", description = "Validate each ping's data: the buffer the server wrote back must equal "
            + "the one it read; a mismatch ends the run (exit 1).")
    boolean validate;

    @Mixin
    ClientMpaOptions mpa = new ClientMpaOptions();

    @Mixin
    TlsOptions tls = new TlsOptions();

    @Option(names = "--timeout", paramLabel = "MS", description = "Per-step timeout in ms; with --tls the TLS handshake "
            + "is a step (default: ${DEFAULT-VALUE}).")
    @Range(min = 1)
    long timeoutMs = 10_000;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        InetSocketAddress server;
        try {
            tls.check(!wire.tool().carriesTls());
            server = HostPort.of(target, address, port).resolve(wire.defaultPort());
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("ping: " + e.getMessage());
            return CommandLineChecks.EXIT_USAGE;
        }
        try (IwarpStack stack = wire.tool().stack(IwarpStack.builder().threads(1));
             ClientWire client = wire.tool().clientWire(stack, mpa, tls.client(!wire.tool().carriesTls(), timeoutMs))) {
            return run(client, server, count, size, display, validate, mpa.crc, timeoutMs, out) ? 0 : 1;
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("ping: " + e.getMessage());
            return CommandLineChecks.EXIT_USAGE;
        }
    }

    /** HOST, HOST:PORT or [IPv6]:PORT; the iWARP default port. */
    static InetSocketAddress parse(String hostPort) {
        return parse(hostPort, ServerConfig.DEFAULT_PORT);
    }

    /**
     * HOST, HOST:PORT or [IPv6]:PORT, resolved.
     *
     * @throws IllegalArgumentException saying what is wrong with it, or that the host is unknown
     */
    static InetSocketAddress parse(String hostPort, int defaultPort) {
        return HostPort.parse(hostPort).resolve(defaultPort);
    }

    /** As below, displaying and validating each ping's data when {@code verify} (as {@code demo} does). */
    static boolean run(ClientWire wire, InetSocketAddress server, int count, int size, boolean verify, boolean crc,
                       long timeoutMs, PrintWriter out) {
        return run(wire, server, count, size, verify, verify, crc, timeoutMs, out);
    }

    /**
     * Connects, runs {@code count} pings, prints one line per ping when {@code display} and a summary;
     * with {@code validate} a ping whose data came back different ends the run.
     */
    static boolean run(ClientWire wire, InetSocketAddress server, int count, int size, boolean display,
                       boolean validate, boolean crc, long timeoutMs, PrintWriter out) {
        long t0 = System.nanoTime();
        int ok = 0;
        try (RpingClient client = RpingClient.connect(wire, server, crc, size, timeoutMs)) {
            out.printf("connected to %s: %s%n", dev.iwarp.server.wire.Addresses.format(server), client.connection().parameters());
            for (int n = 0; n < count; n++) {
                byte[] got = client.ping(n);
                if (validate) {
                    byte[] sent = client.startBuffer();
                    if (!Arrays.equals(sent, got)) {
                        out.printf("ping %d: data mismatch: sent \"%s\", got \"%s\"%n", n, text(sent), text(got));
                        break;
                    }
                }
                if (display) {
                    out.println("ping data: " + text(got));
                }
                ok++;
            }
        } catch (IOException e) {
            out.println("ping failed: " + e.getMessage());
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        out.printf("%d/%d pings of %d octets %s with %s in %.1f ms%n", ok, count, size,
                validate ? "verified" : "completed", dev.iwarp.server.wire.Addresses.format(server), ms);
        return ok == count;
    }

    /** The C string in {@code b} (up to the first NUL), like rping's printf("%s"). */
    static String text(byte[] b) {
        int end = 0;
        while (end < b.length && b[end] != 0) {
            end++;
        }
        return new String(b, 0, end, StandardCharsets.US_ASCII);
    }
}
