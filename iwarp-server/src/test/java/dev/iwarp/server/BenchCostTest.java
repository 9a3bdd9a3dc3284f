package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** serve answers bench's cost question; bench's json carries both sides' cost and leaves out what it did not measure. */
class BenchCostTest {
    private static RpingServer serve(boolean echoOnly) throws Exception {
        return RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withEchoOnly(echoOnly),
                ServeOptions.on(IwarpStack.builder().threads(1).build()));
    }

    @Test
    void serveAnswersWithItsProcessCounters() throws Exception {
        try (RpingServer server = serve(false); IwarpStack stack = IwarpStack.builder().threads(1).build();
             ClientWire wire = IwarpWire.client(stack)) {
            BenchCost.Snapshot first = BenchCost.ask(wire, server.localAddress(), false, 10_000);
            BenchCost.Snapshot second = BenchCost.ask(wire, server.localAddress(), true, 10_000);
            // in-process serve: its counters are this JVM's, so they are at most what this JVM reports now
            BenchCost.Snapshot now = BenchCost.Snapshot.ofThisProcess();
            assertTrue(first.cpuNanos() > 0 && first.allocatedBytes() > 0, first.toString());
            assertTrue(second.cpuNanos() >= first.cpuNanos() && second.cpuNanos() <= now.cpuNanos(), second + " " + now);
            assertTrue(second.allocatedBytes() > first.allocatedBytes(), first + " " + second);
            assertEquals(2L, server.accepted(), "one connection per question");
        }
    }

    @Test
    void anEchoingServerLeavesTheCostUnknown() throws Exception {
        try (RpingServer server = serve(true); IwarpStack stack = IwarpStack.builder().threads(1).build();
             ClientWire wire = IwarpWire.client(stack)) {
            assertEquals(BenchCost.Snapshot.UNKNOWN, BenchCost.ask(wire, server.localAddress(), false, 10_000));
        }
    }

    private static Map<String, String> json(RpingServer server, String... extra) {
        String[] base = {"bench", "127.0.0.1:" + server.localAddress().getPort(), "--op", "write", "--size", "4096",
                "--iterations", "300", "--output", "json"};
        String[] all = java.util.Arrays.copyOf(base, base.length + extra.length);
        System.arraycopy(extra, 0, all, base.length, extra.length);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(all, new PrintWriter(out, true), new PrintWriter(err, true));
        assertEquals(0, code, err.toString());
        return BenchOutputParser.json(out.toString().trim());
    }

    @Test
    void jsonCarriesServerCostWarmupAndVerifiedOctetsOnlyWhenChecked() throws Exception {
        try (RpingServer server = serve(false)) {
            Map<String, String> plain = json(server, "--warmup", "0");
            assertFalse(plain.containsKey("verified_octets"), "absent, not 0, without --verify: " + plain);
            assertTrue(Double.parseDouble(plain.get("server_cpu_usec_per_msg")) > 0, plain.toString());
            assertTrue(Double.parseDouble(plain.get("client_process_cpu_usec_per_msg")) > 0, plain.toString());
            assertTrue(plain.get("connection_at_start").startsWith("MPA Rev 2, CRC off"), plain.toString());
            assertNull(plain.get("warmup_stable"), "only for --warmup stable");
            assertEquals(0.0, Double.parseDouble(plain.get("warmup_seconds")), 0.05);

            Map<String, String> checked = json(server, "--warmup", "stable", "--warmup-max", "1", "--verify",
                    "--no-server-cost");
            long verified = Long.parseLong(checked.get("verified_octets")); // the warm-up's Writes are checked too
            assertTrue(verified >= 300L * 4096 && verified % 4096 == 0, checked.toString());
            assertEquals("null", checked.get("server_cpu_usec_per_msg"), "not asked: not measured");
            assertTrue(checked.get("warmup_stable").equals("true") || checked.get("warmup_stable").equals("false"));
            double took = Double.parseDouble(checked.get("warmup_seconds"));
            assertTrue(took >= 0.9 || checked.get("warmup_stable").equals("true") && took >= 1.4, checked.toString());
        }
    }
}
