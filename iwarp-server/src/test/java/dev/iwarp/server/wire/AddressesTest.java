package dev.iwarp.server.wire;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

class AddressesTest {

    @Test
    void literalsNamesAndUnresolved() throws Exception {
        // InetSocketAddress.toString gives "127.0.0.1/127.0.0.1:7174" and "localhost/127.0.0.1:7174" for these
        assertEquals("127.0.0.1:7174", Addresses.format(new InetSocketAddress("127.0.0.1", 7174)));
        assertEquals("127.0.0.1:7174", Addresses.format(
                new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), 7174)));
        assertEquals("[::1]:7174", Addresses.format(new InetSocketAddress("::1", 7174)));
        assertEquals("[::1]:7174", Addresses.format(new InetSocketAddress("0:0:0:0:0:0:0:1", 7174)));
        assertEquals("iwarp.example (192.0.2.7):7174", Addresses.format(new InetSocketAddress(
                InetAddress.getByAddress("iwarp.example", new byte[] {(byte) 192, 0, 2, 7}), 7174)));
        assertEquals("iwarp.example:7174", Addresses.format(InetSocketAddress.createUnresolved("iwarp.example", 7174)));
        assertEquals("?", Addresses.format(null));
        assertEquals("[2001:db8::1:0:0:1]:1", Addresses.format(new InetSocketAddress("2001:db8:0:0:1:0:0:1", 1)));
        assertEquals("[fe80::]:1", Addresses.format(new InetSocketAddress("fe80:0:0:0:0:0:0:0", 1)));
        assertEquals("[1:0:2:3:4:5:6:7]:1", Addresses.format(new InetSocketAddress("1:0:2:3:4:5:6:7", 1)));
    }

    @Test
    void printableKeepsTheAddress() {
        InetSocketAddress a = new InetSocketAddress("127.0.0.1", 48000);
        assertEquals("127.0.0.1:48000", String.valueOf(Addresses.printable(a)));
        assertSame(a, Addresses.unwrap(Addresses.printable(a)));
        assertEquals("127.0.0.1:48000", Addresses.format(Addresses.printable(a)));
    }

    @Test
    void reasonDropsNettysRepeatOfTheAddressAndItsNativeCall() {
        assertEquals("Connection refused", Addresses.reason(new java.io.IOException(
                "finishConnect(..) failed with error(-111): Connection refused: /127.0.0.1:63001")));
        assertEquals("Connection refused", Addresses.reason(new java.net.ConnectException(
                "Connection refused: localhost/127.0.0.1:7174")));
        assertEquals("Connection refused", Addresses.reason(new java.net.ConnectException(
                "Connection refused: /0:0:0:0:0:0:0:1:7174")));
        assertEquals("Address already in use", Addresses.reason(new java.io.IOException(
                "bind(..) failed with error(-98): Address already in use")));
        assertEquals("no MPA Reply within 5000 ms", Addresses.reason(new java.io.IOException(
                "no MPA Reply within 5000 ms")));
        assertEquals("TimeoutException", Addresses.reason(new java.util.concurrent.TimeoutException()));
    }
}
