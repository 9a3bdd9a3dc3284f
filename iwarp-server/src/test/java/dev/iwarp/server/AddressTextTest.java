package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.testkit.LogCapture;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;

import static dev.iwarp.server.ToolRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tools write a peer's address as {@code 127.0.0.1:59816}, never as {@code InetSocketAddress.toString} does
 * ({@code /127.0.0.1:59816}), nor twice in Netty's words ({@code Connection refused: /127.0.0.1:59816}): serve's
 * refusal line, the ib_* server that cannot listen, a client that cannot connect.
 */
class AddressTextTest {

    @Test
    void serveNamesARefusedPeerWithoutASlash() throws Exception {
        ServerConfig config = ServerConfig.defaults().withAddress("127.0.0.1", 0);
        config = config.withLimits(0, config.startupTimeoutMs(), config.idleTimeoutSec());
        try (LogCapture log = LogCapture.of("dev.iwarp.server");
             RpingServer server = RpingServer.start(config, ServeOptions.on(IwarpStack.builder().threads(1).build()))) {
            ToolRun r = run("ping", "127.0.0.1:" + server.port(), "-C", "1", "--timeout", "60000");
            assertEquals(1, r.code(), r.out() + r.err());
            String line = log.await(Level.WARN, "refused: already serving 0 connections");
            // before: "/127.0.0.1:59816 refused: ..."
            assertTrue(line.matches("127\\.0\\.0\\.1:\\d+ refused: already serving 0 connections \\(--max-connections\\)"),
                    line);
        }
    }

    @Test
    void anIbServerThatCannotListenNamesTheAddressOnce() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            ToolRun r = run("ib_write_bw", "-R", "--bind", "127.0.0.1", "-p", Integer.toString(port));
            assertEquals(1, r.code(), r.out() + r.err());
            // before: "ib_write_bw: cannot listen on /127.0.0.1:PORT: bind(..) failed with error(-98): Address ..."
            assertEquals("ib_write_bw: cannot listen on 127.0.0.1:" + port + ": Address already in use\n", r.err());
        }
    }

    @Test
    void aClientThatCannotConnectSaysWhyOnce() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        ToolRun r = run("ping", "127.0.0.1:" + port, "-C", "1", "--timeout", "60000");
        assertEquals(1, r.code(), r.out() + r.err());
        // before: "... cannot connect to 127.0.0.1:PORT: finishConnect(..) failed with error(-111): Connection
        // refused: /127.0.0.1:PORT" (epoll) or "...: Connection refused: /127.0.0.1:PORT" (NIO)
        assertEquals("ping failed: cannot connect to 127.0.0.1:" + port + ": Connection refused",
                r.out().lines().findFirst().orElse(""), r.out() + r.err());
        r = run("ib_write_bw", "-R", "-p", Integer.toString(port), "127.0.0.1");
        assertEquals(1, r.code(), r.out() + r.err());
        assertEquals("ib_write_bw: cannot open the control connection: cannot connect to 127.0.0.1:" + port
                + ": Connection refused\n", r.err());
    }
}
