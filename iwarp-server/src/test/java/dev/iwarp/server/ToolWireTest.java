package dev.iwarp.server;

import dev.iwarp.bootstrap.IftFraming;
import dev.iwarp.bootstrap.MpaFraming;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What each --wire's strategy tells the commands, which no longer ask the wire kind themselves. */
class ToolWireTest {
    private static ToolWire tool(WireOptions.Wire w) {
        WireOptions o = new WireOptions();
        o.wire = w;
        return o.tool();
    }

    @Test
    void eachWireNamesItselfAndKeepsItsPort() {
        for (WireOptions.Wire w : WireOptions.Wire.values()) {
            assertEquals(w.name(), tool(w).name());
        }
        assertEquals(List.of(7174, 7175, 7176, 7177), List.of(tool(WireOptions.Wire.iwarp).defaultPort(),
                tool(WireOptions.Wire.vitcp).defaultPort(), tool(WireOptions.Wire.ift).defaultPort(),
                tool(WireOptions.Wire.sctp).defaultPort()));
    }

    @Test
    void capabilitiesAsTheCommandsKnewThem() {
        // TLS wraps MPA only; --pcap records a TCP stream (MPA, IFT); VI/TCP and SCTP bring their own NIO threads
        for (WireOptions.Wire w : WireOptions.Wire.values()) {
            ToolWire t = tool(w);
            assertEquals(w == WireOptions.Wire.iwarp, t.carriesTls(), w + " TLS");
            assertEquals(w == WireOptions.Wire.iwarp || w == WireOptions.Wire.ift, t.capturable(), w + " pcap");
            assertEquals(w == WireOptions.Wire.iwarp || w == WireOptions.Wire.ift, t.usesStackTransport(),
                    w + " transport");
            assertEquals(w != WireOptions.Wire.vitcp, t.usesStack(), w + " stack");
        }
    }

    @Test
    void serveRefusesAnotherWiresOptions() {
        tool(WireOptions.Wire.iwarp).checkServe(new ServerMpaOptions(true, true, 1, false), true, true);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> tool(WireOptions.Wire.ift).checkServe(new ServerMpaOptions(true, false, 2, true), false, false));
        assertTrue(e.getMessage().contains("MPA options, not for --wire ift"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> tool(WireOptions.Wire.vitcp).checkServe(new ServerMpaOptions(false, false, 2, true), true, false));
        assertThrows(IllegalArgumentException.class,
                () -> tool(WireOptions.Wire.sctp).checkServe(new ServerMpaOptions(false, false, 2, true), false, true));
        // --crc is VI/TCP's CRC option too
        tool(WireOptions.Wire.vitcp).checkServe(new ServerMpaOptions(true, false, 2, true), false, false);
    }

    @Test
    void probeSpeaksMpaAndIftOnly() {
        assertInstanceOf(MpaFraming.class, tool(WireOptions.Wire.iwarp).probeFraming(new ClientMpaOptions(), false, 1000));
        assertInstanceOf(IftFraming.class, tool(WireOptions.Wire.ift).probeFraming(new ClientMpaOptions(), false, 1000));
        assertThrows(IllegalArgumentException.class,
                () -> tool(WireOptions.Wire.ift).probeFraming(new ClientMpaOptions(), true, 1000));
        assertThrows(IllegalArgumentException.class,
                () -> tool(WireOptions.Wire.vitcp).probeFraming(new ClientMpaOptions(), false, 1000));
        assertThrows(IllegalArgumentException.class,
                () -> tool(WireOptions.Wire.sctp).probeFraming(new ClientMpaOptions(), false, 1000));
    }
}
