package dev.iwarp.server;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Command-line plumbing: {@code serve} is the default subcommand; HOST[:PORT] parsing. */
class MainTest {
    @Test
    void serveIsTheDefaultSubcommand() {
        assertArrayEquals(new String[] {"serve"}, Main.withDefaultSubcommand(new String[0]));
        assertArrayEquals(new String[] {"serve", "--port", "9"}, Main.withDefaultSubcommand(new String[] {"--port", "9"}));
        assertArrayEquals(new String[] {"ping", "h"}, Main.withDefaultSubcommand(new String[] {"ping", "h"}));
        assertArrayEquals(new String[] {"--help"}, Main.withDefaultSubcommand(new String[] {"--help"}));
    }

    @Test
    void hostPortForms() throws Exception {
        assertEquals(new InetSocketAddress(InetAddress.getByName("10.0.0.1"), 7174), PingCommand.parse("10.0.0.1"));
        assertEquals(new InetSocketAddress(InetAddress.getByName("10.0.0.1"), 9000), PingCommand.parse("10.0.0.1:9000"));
        assertEquals(new InetSocketAddress(InetAddress.getByName("::1"), 9000), PingCommand.parse("[::1]:9000"));
        assertEquals(new InetSocketAddress(InetAddress.getByName("::1"), 7174), PingCommand.parse("::1"));
    }
}
