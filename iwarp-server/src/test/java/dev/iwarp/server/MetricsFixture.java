package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.function.DoublePredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A server reporting to {@link ServeMetrics}, and its Prometheus endpoint scraped over HTTP. */
final class MetricsFixture implements AutoCloseable {
    final ServeMetrics metrics = new ServeMetrics(false);
    final RpingServer server;
    private final MetricsHttpServer http;

    /** {@code stack}: its observer and event-loop wrapper are set here. */
    MetricsFixture(ServerConfig config, IwarpStack.Builder stack, dev.iwarp.bootstrap.tls.TlsSettings tls)
            throws Exception {
        RpingServer s = null;
        MetricsHttpServer h = null;
        try {
            s = RpingServer.start(config,
                    ServeOptions.on(stack.observer(metrics).ioHandlerFactory(metrics.eventLoops()).build()).tls(tls));
            metrics.bind(s);
            h = MetricsHttpServer.start(new InetSocketAddress("127.0.0.1", 0), metrics::scrape);
        } catch (Exception e) {
            if (s != null) {
                s.close();
            }
            metrics.close();
            throw e;
        }
        server = s;
        http = h;
    }

    MetricsFixture(ServerConfig config) throws Exception {
        this(config, IwarpStack.builder().threads(1), null);
    }

    /** GET /metrics over HTTP. */
    String scrape() throws IOException {
        return get("http://127.0.0.1:" + http.localAddress().getPort() + "/metrics", 200);
    }

    /** The value of {@code name{labels}} in a fresh scrape (labels exactly, in Prometheus' order; "" for none). */
    double value(String name, String labels) throws IOException {
        String scrape = scrape();
        double v = value(scrape, name, labels);
        assertTrue(v >= 0, () -> name + "{" + labels + "} missing:\n" + scrape);
        return v;
    }

    /** Scrapes until {@code name{labels}} satisfies {@code ok} (10 s at most); returns the last value. */
    double await(String name, String labels, DoublePredicate ok) throws Exception {
        double v = value(name, labels);
        for (int i = 0; i < 200 && !ok.test(v); i++) {
            Thread.sleep(50);
            v = value(name, labels);
        }
        assertTrue(ok.test(v), name + "{" + labels + "} stayed at " + v);
        return v;
    }

    /** iwarp_connections_refused_total for {@code cause}. */
    double refused(String cause) throws IOException {
        return value("iwarp_connections_refused_total", "cause=\"" + cause + "\"");
    }

    @Override
    public void close() {
        http.close();
        server.close();
        metrics.close();
    }

    /** The value of the sample {@code name{labels}} (labels in Prometheus' order, exactly), or -1 when absent. */
    static double value(String scrape, String name, String labels) {
        Pattern p = Pattern.compile("^" + Pattern.quote(name) + (labels.isEmpty() ? "(\\{[^}]*\\})?"
                : "\\{" + Pattern.quote(labels) + "[^}]*\\}") + " ([0-9.eE+-]+)$", Pattern.MULTILINE);
        Matcher m = p.matcher(scrape);
        return m.find() ? Double.parseDouble(m.group(m.groupCount())) : -1;
    }

    static String get(String url, int status) throws IOException {
        HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
        // the first scrape in a cold JVM (Micrometer's classes, the registry's first pass) has taken more than 5 s
        // on a loaded machine; a scrape that never comes still fails the test, later
        c.setConnectTimeout(60_000);
        c.setReadTimeout(60_000);
        assertEquals(status, c.getResponseCode(), url);
        try (InputStream in = status == 200 ? c.getInputStream() : c.getErrorStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
