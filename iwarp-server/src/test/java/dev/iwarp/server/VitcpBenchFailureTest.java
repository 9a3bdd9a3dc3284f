package dev.iwarp.server;

import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.VitcpWire;
import dev.iwarp.vitcp.VitcpConfig;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * bench over VI/TCP names why a work request was flushed: what ended the VI (here serve closing the connection), as
 * over iWARP it names the Terminate the peer sent.
 */
class VitcpBenchFailureTest {
    private static final byte[] DISCRIMINATOR = VitcpWire.DEFAULT_DISCRIMINATOR.getBytes(StandardCharsets.US_ASCII);

    @Test
    void aWriteFlushedAfterServeClosedSaysTheViEnded() throws Exception {
        try (RpingServer s = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(VitcpWire.server(VitcpConfig.builder().build(), DISCRIMINATOR, false, 1)))) {
            ClientWire client = VitcpWire.client(VitcpConfig.builder().build(), DISCRIMINATOR);
            try (Bench b = Bench.connect(client, s.localAddress(), BenchSettings.of(Bench.Op.write, 4096, 100, 4))) {
                RpingSession session = s.lastSession();
                // the session gets its connection once accept returns, which the client need not wait for
                for (int i = 0; i < 10_000 && session.connection() == null; i++) {
                    Thread.sleep(1);
                }
                session.connection().channel().close().sync();
                b.connection(0).channel().closeFuture().sync(); // the client's VI saw the close
                IOException e = assertThrows(IOException.class, () -> b.run(null));
                assertTrue(e.getMessage().matches("an RDMA Write failed: FLUSHED \\(VI connection ended: TCP "
                        + "(connection closed|error: .+)\\)"), e.getMessage());
            } finally {
                client.close();
            }
        }
    }
}
