package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;
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
 * {@code ping HOST[:PORT]}: an rping client (siw-interop.md §7) against {@code serve} or {@code rping -s}, or over
 * VI/TCP against {@code serve --wire vitcp}.
 */
@Command(name = "ping", mixinStandardHelpOptions = true,
        description = "rping-compatible client: the server RDMA Reads our ping data and RDMA Writes it back.")
final class PingCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "HOST[:PORT]", description = "Server (default port 7174, with --wire vitcp 7175).")
    String target;

    @Mixin
    WireOptions wire = new WireOptions();

    @Option(names = "-C", paramLabel = "COUNT", description = "Number of pings (default: ${DEFAULT-VALUE}).")
    int count = 10;

    @Option(names = "-S", paramLabel = "SIZE", description = "Ping buffer size, 26..65535 (default: ${DEFAULT-VALUE}).")
    int size = 64;

    @Option(names = "-v", description = "Verify each ping's data and print it (rping's \"ping data: ...\").")
    boolean verify;

    @Mixin
    ClientMpaOptions mpa = new ClientMpaOptions();

    @Option(names = "--timeout", paramLabel = "MS", description = "Per-step timeout in ms (default: ${DEFAULT-VALUE}).")
    long timeoutMs = 10_000;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (IwarpStack stack = wire.vitcp() ? null : IwarpStack.builder().threads(1).build();
             ClientWire client = wire.vitcp() ? mpa.checkVitcp(wire.clientWire(null))
                     : wire.sctp() ? wire.clientWire(stack) : IwarpWire.client(stack, mpa.settings(1, 1))) {
            return run(client, parse(target, wire.defaultPort()), count, size, verify, mpa.crc, timeoutMs, out) ? 0 : 1;
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("ping: " + e.getMessage());
            return 2;
        }
    }

    /** HOST, HOST:PORT or [IPv6]:PORT; the iWARP default port. */
    static InetSocketAddress parse(String hostPort) {
        return parse(hostPort, ServerConfig.DEFAULT_PORT);
    }

    /** HOST, HOST:PORT or [IPv6]:PORT. */
    static InetSocketAddress parse(String hostPort, int defaultPort) {
        String host = hostPort;
        int port = defaultPort;
        if (hostPort.startsWith("[")) {
            int end = hostPort.indexOf(']');
            host = hostPort.substring(1, end);
            if (hostPort.length() > end + 1 && hostPort.charAt(end + 1) == ':') {
                port = Integer.parseInt(hostPort.substring(end + 2));
            }
        } else if (hostPort.indexOf(':') >= 0 && hostPort.indexOf(':') == hostPort.lastIndexOf(':')) {
            host = hostPort.substring(0, hostPort.indexOf(':'));
            port = Integer.parseInt(hostPort.substring(hostPort.indexOf(':') + 1));
        }
        return new InetSocketAddress(host, port);
    }

    /** Connects, runs {@code count} pings, prints one line per ping (when verifying) and a summary. */
    static boolean run(ClientWire wire, InetSocketAddress server, int count, int size, boolean verify, boolean crc,
                       long timeoutMs, PrintWriter out) {
        long t0 = System.nanoTime();
        int ok = 0;
        try (RpingClient client = RpingClient.connect(wire, server, crc, size, timeoutMs)) {
            out.printf("connected to %s: %s%n", server, client.connection().parameters());
            for (int n = 0; n < count; n++) {
                byte[] got = client.ping(n);
                if (verify) {
                    byte[] sent = client.startBuffer();
                    if (!Arrays.equals(sent, got)) {
                        out.printf("ping %d: data mismatch: sent \"%s\", got \"%s\"%n", n, text(sent), text(got));
                        break;
                    }
                    out.println("ping data: " + text(got));
                }
                ok++;
            }
        } catch (IOException e) {
            out.println("ping failed: " + e.getMessage());
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        out.printf("%d/%d pings of %d octets %s with %s in %.1f ms%n", ok, count, size,
                verify ? "verified" : "completed", server, ms);
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
