package dev.iwarp.server;

import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.VitcpWire;
import dev.iwarp.vitcp.VitcpConfig;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve --wire vitcp --metrics-port}: the VI/TCP wire builds its own event loops, and they report their busy
 * time like an iWARP stack's ({@code iwarp_eventloop_busy_seconds_total{loop}}), through the same options serve uses.
 */
class VitcpServeMetricsTest {
    private static final byte[] DISCRIMINATOR = "rping".getBytes(StandardCharsets.US_ASCII);

    @Test
    void theVitcpLoopsReportTheirBusyTime() throws Exception {
        MetricsOptions options = new MetricsOptions();
        options.port = 0;
        options.jmx = false;
        ServerConfig config = ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(1 << 16);
        RpingServer server = RpingServer.start(config, ServeOptions.on(VitcpWire.server(VitcpConfig.builder().crcOption(true)
                .rdmaReadWindow(16).build(), DISCRIMINATOR, false, 2, options.ioHandlers())));
        try (ClientWire wire = VitcpWire.client(VitcpConfig.builder().build(), DISCRIMINATOR)) {
            options.started(server);
            double before = busy(options, 0) + busy(options, 1); // the listener's loop and its connection's
            try (RpingClient client = RpingClient.connect(wire, server.localAddress(), false, 64, 10_000)) {
                for (int n = 0; n < 20; n++) {
                    assertArrayEquals(RpingClient.pingData(n, 'A' + n, 64), client.ping(n));
                }
            }
            double after = busy(options, 0) + busy(options, 1);
            assertTrue(after > before, "the loops that accepted and served 20 pings were busy: " + before + " -> "
                    + after);
        } finally {
            server.close();
            options.close();
        }
    }

    /** {@code iwarp_eventloop_busy_seconds_total{loop}} in a fresh scrape; fails when it is missing. */
    private static double busy(MetricsOptions options, int loop) {
        String scrape = options.metrics().scrape();
        double v = MetricsFixture.value(scrape, "iwarp_eventloop_busy_seconds_total", "loop=\"" + loop + "\"");
        assertTrue(v >= 0, () -> "no busy time for loop " + loop + ":\n" + scrape);
        return v;
    }
}
