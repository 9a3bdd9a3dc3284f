package dev.iwarp.server;

import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.server.wire.VitcpWire;
import dev.iwarp.vitcp.VitcpConfig;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** serve's MPA options: what they make of the Responder's settings with what every framing shares. */
class ServerMpaOptionsTest {
    @Test
    void defaultsLetTheClientDecideCrcAndTakeTheSharedConfig() {
        ServerLimits d = ServerLimits.defaults();
        ServerLimits allowMarkers = new ServerLimits(d.maxStartups(), d.maxPerSource(), d.messageDeadlineMs(),
                d.maxReadSize(), d.sourcePrefixV4(), d.sourcePrefixV6(), d.maxStartupsPerSource(),
                d.firstOctetTimeoutMs(), d.drainTimeoutSec(), true, d.tlsHandshakesPerSec());
        ServerConfig config = new ServerConfig("127.0.0.1", 0, 5, 7, 100, 1234, 0, 0, false, false, allowMarkers);
        MpaSettings s = ServerMpaOptions.defaults().settings(config);
        assertFalse(s.crc(), "the Request's C bit decides");
        assertFalse(s.markers());
        assertEquals(2, s.revision());
        assertTrue(s.acceptPeerToPeer());
        assertEquals(5, s.ird());
        assertEquals(7, s.ord());
        assertEquals(1234, s.startupTimeoutMillis());
        assertTrue(s.acceptMarkers(), "--allow-markers");
    }

    @Test
    void serveOptionsBecomeTheResponderSettings() {
        MpaSettings s = new ServerMpaOptions(true, true, 1, false).settings(ServerConfig.defaults());
        assertTrue(s.crc());
        assertTrue(s.markers());
        assertEquals(1, s.revision());
        assertFalse(s.acceptPeerToPeer());
        assertFalse(s.acceptMarkers(), "markers asked of the peer, not served when it asks");
    }

    @Test
    void onlyRevisionsOneAndTwo() {
        assertThrows(IllegalArgumentException.class, () -> new ServerMpaOptions(false, false, 3, true));
        assertThrows(IllegalArgumentException.class, () -> new ServerMpaOptions(false, false, 0, true));
    }

    @Test
    void mpaOptionsNeedAStack() {
        var wire = VitcpWire.server(VitcpConfig.defaults(),
                VitcpWire.DEFAULT_DISCRIMINATOR.getBytes(StandardCharsets.US_ASCII), false, 1);
        try {
            assertThrows(IllegalStateException.class,
                    () -> ServeOptions.on(wire).mpa(ServerMpaOptions.defaults()));
        } finally {
            wire.close();
        }
    }
}
