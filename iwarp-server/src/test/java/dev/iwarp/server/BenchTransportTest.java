package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.Transport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;


import static dev.iwarp.server.ToolRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@code --transport} of bench and serve: io_uring end to end on this kernel, and the one-line refusals. */
class BenchTransportTest {
    @Test
    void benchRunsOverIoUringAgainstAServeOnIoUring() throws Exception {
        String why = Transport.IO_URING.unavailableReason();
        assumeTrue(why == null, why);
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().transport(Transport.IO_URING).threads(1).build()))) {
            assertEquals(Transport.IO_URING, server.stack().transport());
            for (String op : new String[] {"write", "read"}) {
                ToolRun run = run("bench", "127.0.0.1:" + server.localAddress().getPort(), "--transport", "io_uring",
                        "--op", op, "--size", "4096", "--iterations", "200", "--warmup", "0", "--verify");
                assertEquals(0, run.code(), run.err());
                assertTrue(run.out().contains("  bytes 819200, iterations 200,"), run.out());
            }
        }
    }

    /**
     * Pipelined Sends echoed by serve, on every transport this kernel allows: io_uring reports a Send's completion
     * after the write's own completion event, when the client may already hold the echo and have sent its next
     * Send, so serve posts each echo's replacement receive before the echo (RpingSessionRingTest shows the order).
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void pipelinedSendsAreEchoedOnEveryTransport(Transport transport) throws Exception {
        String why = transport.unavailableReason();
        assumeTrue(why == null, why);
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().transport(transport).threads(1).build()))) {
            for (int size : new int[] {64, 65536}) {
                int iterations = size == 64 ? 20_000 : 1_000;
                ToolRun run = run("bench", "127.0.0.1:" + server.localAddress().getPort(), "--transport",
                        transport.cliName(), "--op", "send", "--size", String.valueOf(size), "--depth", "16",
                        "--iterations", String.valueOf(iterations), "--warmup", "0", "--verify");
                assertEquals(0, run.code(), transport + " " + size + ": " + run.err() + run.out());
                assertTrue(run.out().contains("  bytes " + (long) iterations * size + ", iterations " + iterations
                        + ","), run.out());
            }
        }
    }

    /**
     * Sends echoed one at a time by a {@code serve --echo} (bench's hello is echoed: depth 1), on every transport
     * this kernel allows: its one receive stays posted while an echo is on its way (RpingSessionRingTest shows the
     * order io_uring reports).
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void plainEchoesServeEveryTransport(Transport transport) throws Exception {
        String why = transport.unavailableReason();
        assumeTrue(why == null, why);
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0)
                .withEchoOnly(true), ServeOptions.on(IwarpStack.builder().transport(transport).threads(1).build()))) {
            ToolRun run = run("bench", "127.0.0.1:" + server.localAddress().getPort(), "--transport",
                    transport.cliName(), "--op", "send", "--size", "64", "--depth", "4", "--iterations", "5000",
                    "--warmup", "0", "--verify");
            assertEquals(0, run.code(), transport + ": " + run.err() + run.out());
            assertTrue(run.out().contains("  bytes 320000, iterations 5000,"), run.out());
        }
    }

    @Test
    void anUnknownTransportIsAUsageError() {
        ToolRun bench = run("bench", "127.0.0.1:46001", "--transport", "kqueue");
        assertEquals(2, bench.code(), bench.err());
        assertEquals("bench: unknown transport kqueue: nio, epoll or io_uring\n", bench.err());
        ToolRun serve = run("serve", "--address", "127.0.0.1", "--port", "0", "--transport", "kqueue");
        assertEquals(2, serve.code(), serve.err());
        assertTrue(serve.err().endsWith("serve: unknown transport kqueue: nio, epoll or io_uring\n"), serve.err());
    }

    @Test
    void wiresWithTheirOwnTransportRefuseTheOption() {
        ToolRun run = run("bench", "127.0.0.1:46001", "--wire", "vitcp", "--transport", "nio");
        assertEquals(2, run.code(), run.err());
        assertEquals("bench: --transport is for --wire iwarp and ift: VI/TCP and SCTP run on NIO\n", run.err());
    }
}
