package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.tls.TlsCertificates;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.framing.DirectReadAllocator;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static dev.iwarp.server.ToolRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * serve puts its own handlers (log context, guard, first-octets watch) below the MPA framer; they pass the
 * socket's reads on unchanged, so a large Write is still read straight into the target region. Inside TLS the
 * socket carries records, and nothing is read directly.
 */
class ServeDirectReadTest {
    private static final int SIZE = 256 * 1024;
    /**
     * bench's patience for each step: a TLS handshake and MPA startup in a cold JVM took over 10 s (bench's
     * default) on a 2-core machine at load 15; what is tested here is where the octets go, not how fast.
     */
    private static final String LOADED_MACHINE_MS = "60000";

    /** The allocators of every connection serve accepted: the framing uses the one a channel already has. */
    private final List<DirectReadAllocator> reads = new CopyOnWriteArrayList<>();

    private IwarpStack stack() {
        return IwarpStack.builder().threads(1).channelHook(ch -> {
            DirectReadAllocator d = new DirectReadAllocator(ch.config().getRecvByteBufAllocator());
            reads.add(d);
            ch.config().setRecvByteBufAllocator(d);
        }).build();
    }

    private long octetsReadDirectly() {
        return reads.stream().mapToLong(DirectReadAllocator::octetsReadDirectly).sum();
    }

    @Test
    void aServeConnectionReadsALargeWriteStraightIntoTheTarget() throws Exception {
        try (RpingServer s = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withSharedTarget(true),
                ServeOptions.on(stack()))) {
            ToolRun bench = run("bench", "127.0.0.1:" + s.port(), "--op", "write", "--size", String.valueOf(SIZE),
                    "--iterations", "4", "--warmup", "0", "--verify", "--timeout", LOADED_MACHINE_MS);
            assertEquals(0, bench.code(), bench.err() + bench.out());
            assertTrue(octetsReadDirectly() > SIZE, "read directly: " + octetsReadDirectly());
        }
    }

    @Test
    void aServeConnectionInsideTlsReadsNothingDirectly() throws Exception {
        TlsCertificates.CertifiedKey self = TlsCertificates.selfSigned("iwarp-server", Duration.ofDays(1));
        try (RpingServer s = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withSharedTarget(true),
                ServeOptions.on(stack()).tls(TlsSettings.builder().identity(self).build()))) {
            ToolRun bench = run("bench", "127.0.0.1:" + s.port(), "--tls", "--pin", self.fingerprint(), "--op",
                    "write", "--size", String.valueOf(SIZE), "--iterations", "4", "--warmup", "0", "--verify",
                    "--timeout", LOADED_MACHINE_MS);
            assertEquals(0, bench.code(), bench.err() + bench.out());
            assertEquals(0, octetsReadDirectly(), "TLS records are decrypted, never read into a region");
        }
    }
}
