package dev.iwarp.server;

import dev.iwarp.server.wire.ServerWire;
import dev.iwarp.server.wire.VitcpWire;
import dev.iwarp.vitcp.VitcpConfig;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A built wire already fixed its framing and TLS: options that would change them are refused, not ignored. */
class ServeOptionsTest {
    @Test
    void builtWireRefusesFramingAndTls() {
        ServerWire wire = VitcpWire.server(VitcpConfig.defaults(),
                VitcpWire.DEFAULT_DISCRIMINATOR.getBytes(StandardCharsets.US_ASCII), false, 1);
        try {
            ServeOptions options = ServeOptions.on(wire);
            assertSame(wire, options.wire());
            assertThrows(IllegalStateException.class, () -> options.tls(null));
            assertThrows(IllegalStateException.class, () -> options.framing(null));
        } finally {
            wire.close();
        }
    }
}
