package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Option;

import java.net.InetSocketAddress;

/**
 * {@code serve --metrics-port P [--metrics-address A] [--no-jmx]}: Micrometer meters ({@link ServeMetrics}) served
 * as Prometheus text on {@code http://A:P/metrics} ({@link MetricsHttpServer}) and registered in JMX.
 */
public final class MetricsOptions {
    private static final Logger LOG = LoggerFactory.getLogger(MetricsOptions.class);

    @Option(names = "--metrics-port", paramLabel = "PORT", description = "Serve metrics in the Prometheus text "
            + "format on http://ADDRESS:PORT/metrics (0..65535; 0 picks a free one); also in JMX. Off by default.")
    Integer port;

    @Option(names = "--metrics-address", paramLabel = "ADDRESS", description = "Address the metrics port binds "
            + "(default: ${DEFAULT-VALUE}, loopback only: metrics tell who is connected).")
    String address = "127.0.0.1";

    @Option(names = "--jmx", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "With --metrics-port: also register the meters in JMX (default: on).")
    boolean jmx = true;

    private ServeMetrics metrics;
    private MetricsHttpServer http;

    /** The meters, created on first use; null without {@code --metrics-port}. */
    ServeMetrics metrics() {
        if (port == null) {
            return null;
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--metrics-port must be 0..65535: " + port);
        }
        if (metrics == null) {
            metrics = new ServeMetrics(jmx);
        }
        return metrics;
    }

    /** {@code stack}, reporting to the meters when metrics are on. */
    IwarpStack.Builder observe(IwarpStack.Builder stack) {
        ServeMetrics m = metrics();
        return m == null ? stack : stack.observer(m).ioHandlerFactory(m.eventLoops());
    }

    /** Wraps event loops' I/O handlers to meter their busy time when metrics are on (loops serve builds itself). */
    java.util.function.UnaryOperator<io.netty.channel.IoHandlerFactory> ioHandlers() {
        ServeMetrics m = metrics();
        return m == null ? java.util.function.UnaryOperator.identity() : m.eventLoops();
    }

    /** Reports the memory budget's committed octets, limit and refusals (when metrics are on). */
    void budget(dev.iwarp.verbs.MemoryBudget budget) {
        ServeMetrics m = metrics();
        if (m != null) {
            m.peerMemoryBudget(budget);
        }
    }

    /** Binds the server's counts and starts the HTTP endpoint (when metrics are on). */
    void started(RpingServer server) throws InterruptedException {
        ServeMetrics m = metrics();
        if (m == null) {
            return;
        }
        m.bind(server);
        try {
            http = MetricsHttpServer.start(new InetSocketAddress(address, port), m::scrape);
        } catch (Exception e) { // Netty throws a taken port's BindException undeclared
            if (CommandLineChecks.isAddressInUse(e)) {
                throw new IllegalStateException("--metrics-port " + port + " is already in use on " + address
                        + " (another serve's metrics? choose another port)", e);
            }
            throw e;
        }
        InetSocketAddress a = http.localAddress();
        LOG.info("metrics on http://{}:{}/metrics{}", a.getHostString(), a.getPort(), jmx ? " and in JMX" : "");
    }

    void close() {
        if (http != null) {
            http.close();
        }
        if (metrics != null) {
            metrics.close();
        }
    }
}
