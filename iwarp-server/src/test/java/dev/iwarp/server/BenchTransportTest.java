package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.Transport;
import org.junit.jupiter.api.Test;


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
            // not send: serve re-posts a pipelined echo's receive when the echo's Send completes, which io_uring
            // reports after the client's next Send may arrive (README, "Transport"); that would make this flaky
            for (String op : new String[] {"write", "read"}) {
                ToolRun run = run("bench", "127.0.0.1:" + server.localAddress().getPort(), "--transport", "io_uring",
                        "--op", op, "--size", "4096", "--iterations", "200", "--warmup", "0", "--verify");
                assertEquals(0, run.code(), run.err());
                assertTrue(run.out().contains("  bytes 819200, iterations 200,"), run.out());
            }
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
