package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.IwarpWire;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code serve --metrics-port}: the Prometheus text over HTTP, scraped before and after traffic. */
class ServeMetricsTest {
    @Test
    void countersMoveWithTrafficAndTerminates() throws Exception {
        ServeMetrics metrics = new ServeMetrics(false);
        dev.iwarp.verbs.MemoryBudget budget = ServerMemory.budget(64 << 20);
        metrics.peerMemoryBudget(budget);
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).observer(metrics).memoryBudget(budget).build()));
             IwarpStack client = IwarpStack.builder().threads(1).build();
             MetricsHttpServer http = MetricsHttpServer.start(new InetSocketAddress("127.0.0.1", 0), metrics::scrape)) {
            metrics.bind(server);
            String url = "http://127.0.0.1:" + http.localAddress().getPort();
            String before = get(url + "/metrics", 200);
            assertEquals(0, value(before, "iwarp_connections_accepted_total", ""), before);
            assertEquals(0, value(before, "iwarp_messages_total", "direction=\"in\",op=\"send\""), before);
            assertEquals(64 << 20, value(before, "iwarp_peer_memory_budget_bytes", ""), before);
            assertEquals(0, value(before, "iwarp_peer_memory_committed_bytes", ""), before);

            StringWriter ping = new StringWriter();
            assertTrue(PingCommand.run(IwarpWire.client(client), server.localAddress(), 3, 100, true, false, 10_000,
                    new PrintWriter(ping, true)), ping::toString);
            Thread.sleep(200); // the server's last completions
            String after = get(url + "/metrics", 200);
            assertEquals(1, value(after, "iwarp_connections_accepted_total", ""), after);
            // the session's target and buffers were held from the budget while it was open, given back at its close
            assertEquals(0, budget.committed(), budget::toString);
            assertEquals(0, value(after, "iwarp_peer_memory_committed_bytes", ""), after);
            assertEquals(0, value(after, "iwarp_peer_memory_refused_total", ""), after);
            // rping: per iteration the client Sends its buffer's advertisement twice, serve Reads 100 octets
            // from it and Writes them back
            assertTrue(value(after, "iwarp_messages_total", "direction=\"in\",op=\"send\"") >= 6, after);
            assertEquals(3, value(after, "iwarp_messages_total", "direction=\"out\",op=\"rdma_read_request\""), after);
            assertEquals(3, value(after, "iwarp_messages_total", "direction=\"in\",op=\"rdma_read_response\""), after);
            assertEquals(300, value(after, "iwarp_payload_bytes_total", "direction=\"in\",op=\"rdma_read_response\""),
                    after);
            assertEquals(3, value(after, "iwarp_messages_total", "direction=\"out\",op=\"rdma_write\""), after);
            assertEquals(300, value(after, "iwarp_payload_bytes_total", "direction=\"out\",op=\"rdma_write\""), after);
            assertEquals(0, value(after, "iwarp_placement_errors_total", "detected_by=\"us\""), after);

            // an RDMA Write to an STag serve never advertised: Terminate DDP 1/1/0x00, a placement error
            StringWriter text = new StringWriter();
            assertEquals(ProbeCommand.EXIT_AS_RFC, ProbeCommand.run(client, server.localAddress(),
                    ProbeCommand.Case.parse("write-invalid-stag"), new ClientMpaOptions(), RpingSession.BUFFER_SIZE + 1,
                    10_000, new PrintWriter(text, true)), text::toString);
            Thread.sleep(200);
            String terminated = get(url + "/metrics", 200);
            assertEquals(1, value(terminated, "iwarp_terminates_total",
                    "code=\"0x00\",direction=\"sent\",etype=\"1\",layer=\"1\""), terminated);
            assertEquals(1, value(terminated, "iwarp_placement_errors_total", "detected_by=\"us\""), terminated);
            assertEquals(2, value(terminated, "iwarp_connections_accepted_total", ""), terminated);
            assertTrue(terminated.contains("# TYPE iwarp_messages_total counter"), terminated);
            assertTrue(terminated.contains("jvm_memory_used_bytes"), "JVM meters too");

            get(url + "/other", 404);
        } finally {
            metrics.close();
        }
    }

    /** The value of the sample {@code name{labels}} (labels in Prometheus' order, exactly), or -1 when absent. */
    private static double value(String scrape, String name, String labels) {
        Pattern p = Pattern.compile("^" + Pattern.quote(name) + (labels.isEmpty() ? "(\\{[^}]*\\})?"
                : "\\{" + Pattern.quote(labels) + "[^}]*\\}") + " ([0-9.eE+-]+)$", Pattern.MULTILINE);
        Matcher m = p.matcher(scrape);
        return m.find() ? Double.parseDouble(m.group(m.groupCount())) : -1;
    }

    private static String get(String url, int status) throws IOException {
        HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
        // the first scrape in a cold JVM (Micrometer's classes, the registry's first pass) has taken more than 5 s
        // on a loaded machine; a scrape that never comes still fails the test, later
        c.setConnectTimeout(60_000);
        c.setReadTimeout(60_000);
        assertEquals(status, c.getResponseCode(), url);
        if (status == 200) {
            assertEquals(MetricsHttpServer.CONTENT_TYPE, c.getContentType());
        }
        try (InputStream in = status == 200 ? c.getInputStream() : c.getErrorStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
