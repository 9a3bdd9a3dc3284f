package dev.iwarp.framing;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A peer's address in the framings' log lines: as serve's own lines write it, and still the peer's address. */
class PeerAddressTest {
    private static String of(String ip, int port) throws Exception {
        return String.valueOf(PeerAddress.of(new InetSocketAddress(InetAddress.getByName(ip), port)));
    }

    @Test
    void writtenAsTheToolsWriteIt() throws Exception {
        assertEquals("127.0.0.1:40123", of("127.0.0.1", 40123));
        assertEquals("[::1]:7174", of("::1", 7174));
        assertEquals("[2001:db8::1:0:0:1]:7174", of("2001:db8:0:0:1:0:0:1", 7174)); // RFC 5952 §4.2.3: the first longest run
        assertEquals("[fe80::1]:7174", of("fe80:0:0:0:0:0:0:1", 7174));
        assertEquals("[::]:7174", of("::", 7174));
        assertEquals("192.0.2.1:1", String.valueOf(PeerAddress.of(new InetSocketAddress("192.0.2.1", 1))));
        assertEquals("?", String.valueOf(PeerAddress.of((java.net.SocketAddress) null)));
    }

    @Test
    void stillThePeersAddressForAPerPeerLogBudget() throws Exception {
        Object a = PeerAddress.of(new InetSocketAddress(InetAddress.getByName("192.0.2.7"), 5555));
        assertTrue(a instanceof InetSocketAddress s && s.getAddress().equals(InetAddress.getByName("192.0.2.7"))
                && s.getPort() == 5555, String.valueOf(a));
    }
}
