package dev.iwarp.server;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * A peer given as {@code HOST}, {@code HOST:PORT}, {@code [IPv6]}, {@code [IPv6]:PORT} or a bare IPv6 address,
 * or rping's way, {@code -a HOST -p PORT}. Errors are {@link IllegalArgumentException}s a user can act on
 * (usage errors, exit 2).
 */
record HostPort(String host, Integer port) {
    static final int MIN_PORT = 1;
    static final int MAX_PORT = 65535;

    /** Parses {@code HOST[:PORT]}; the port is null when not given. */
    static HostPort parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("no host given");
        }
        if (text.startsWith("[")) {
            int end = text.indexOf(']');
            if (end < 0) {
                throw new IllegalArgumentException("'" + text + "': missing ']' after the IPv6 address "
                        + "(write [ADDRESS] or [ADDRESS]:PORT)");
            }
            String host = text.substring(1, end);
            if (host.isEmpty()) {
                throw new IllegalArgumentException("'" + text + "': empty address between [ and ]");
            }
            String rest = text.substring(end + 1);
            if (rest.isEmpty()) {
                return new HostPort(host, null);
            }
            if (!rest.startsWith(":")) {
                throw new IllegalArgumentException("'" + text + "': expected :PORT after ']', not '" + rest + "'");
            }
            return new HostPort(host, port(text, rest.substring(1)));
        }
        int colon = text.indexOf(':');
        if (colon < 0 || colon != text.lastIndexOf(':')) {
            return new HostPort(text, null); // a host name, an IPv4 address, or an IPv6 address without brackets
        }
        if (colon == 0) {
            throw new IllegalArgumentException("'" + text + "': no host before ':'");
        }
        return new HostPort(text.substring(0, colon), port(text, text.substring(colon + 1)));
    }

    /**
     * The peer from a {@code HOST[:PORT]} parameter or rping's {@code -a HOST} and {@code -p PORT} (either may be
     * null): exactly one way of naming the host, and the port once.
     */
    static HostPort of(String hostPort, String a, Integer p) {
        if (hostPort != null && a != null) {
            throw new IllegalArgumentException("give the host once: HOST[:PORT] or -a HOST, not both");
        }
        if (hostPort == null && a == null) {
            throw new IllegalArgumentException("no host given: HOST[:PORT] or -a HOST [-p PORT]");
        }
        HostPort hp = parse(hostPort != null ? hostPort : a.contains(":") && !a.startsWith("[") ? "[" + a + "]" : a);
        if (p == null) {
            return hp;
        }
        if (hp.port != null) {
            throw new IllegalArgumentException("give the port once: HOST:PORT or -p PORT, not both");
        }
        return new HostPort(hp.host, p);
    }

    /** Resolves the host; {@code defaultPort} when none was given. */
    InetSocketAddress resolve(int defaultPort) {
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port != null ? port : defaultPort);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("unknown host '" + host + "'");
        }
    }

    private static int port(String text, String port) {
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "': the port '" + port + "' is not a number "
                    + MIN_PORT + ".." + MAX_PORT);
        }
        if (p < MIN_PORT || p > MAX_PORT) {
            throw new IllegalArgumentException("'" + text + "': port " + p + " is not in " + MIN_PORT + ".." + MAX_PORT);
        }
        return p;
    }
}
