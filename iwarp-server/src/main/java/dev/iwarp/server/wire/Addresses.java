package dev.iwarp.server.wire;

import io.netty.util.NetUtil;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * The one way the tools and serve's log lines write a socket address: {@code 127.0.0.1:7174}, {@code [::1]:7174},
 * {@code host (1.2.3.4):7174} when a name was given, never {@link InetSocketAddress#toString}'s
 * {@code 127.0.0.1/127.0.0.1:7174} or {@code /127.0.0.1:7174}. Never resolves a name.
 */
public final class Addresses {
    private Addresses() {
    }

    /** {@code address} written for a person; {@code "?"} for null, {@code toString} for a non-IP address. */
    public static String format(SocketAddress address) {
        if (!(address instanceof InetSocketAddress a)) {
            return address == null ? "?" : address instanceof Printed p ? p.toString() : address.toString();
        }
        InetAddress ip = a.getAddress();
        String host = a.getHostString(); // the name or literal it was made from: no reverse lookup
        if (ip == null) { // unresolved
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
        }
        String text = ip instanceof Inet6Address v6 ? compressed(v6) : ip.getHostAddress();
        String literal = ip instanceof Inet6Address ? "[" + text + "]" : text;
        boolean named = !host.equals(text) && !sameLiteral(host, ip);
        return (named ? host + " (" + text + ")" : literal) + ":" + a.getPort();
    }

    /**
     * What went wrong, from {@code cause}'s message without what Netty adds to the OS's words: the address again, as
     * {@link InetSocketAddress#toString} writes it ({@code "Connection refused: /127.0.0.1:7174"}), and the native
     * call ({@code "finishConnect(..) failed with error(-111): "}). {@code "Connection refused"}; the class name when
     * there is no message.
     */
    public static String reason(Throwable cause) {
        String m = cause.getMessage();
        if (m == null || m.isBlank()) {
            return cause.getClass().getSimpleName();
        }
        return m.replaceFirst("^\\w+\\(\\.\\.\\) failed with error\\(-?\\d+\\): ", "")
                .replaceFirst(": [\\w.-]*/[\\w.:%]+$", "");
    }

    /** RFC 5952 §4 (Netty's NetUtil writes it so): lower case, the first longest zero run as "::" ("::1"). */
    static String compressed(Inet6Address ip) {
        String text = NetUtil.toAddressString(ip);
        String scope = ip.getScopeId() != 0 ? "%" + ip.getScopeId()
                : ip.getScopedInterface() != null ? "%" + ip.getScopedInterface().getName() : "";
        return text + scope;
    }

    /** A literal spelled differently ({@code 0:0:0:0:0:0:0:1} for {@code ::1}) is still not a name. */
    private static boolean sameLiteral(String host, InetAddress ip) {
        if (host.indexOf(':') < 0 && !host.chars().allMatch(c -> c == '.' || Character.isDigit(c))) {
            return false;
        }
        try {
            return InetAddress.getByName(host).equals(ip); // a literal: parsed, not looked up
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    /**
     * {@code address} as a log argument: prints as {@link #format} and still is the peer's address for whatever
     * inspects log arguments (serve's per-peer log limiter).
     */
    public static SocketAddress printable(SocketAddress address) {
        return address == null || address instanceof Printed ? address : new Printed(address);
    }

    /** The address a {@link #printable} wraps, else {@code address} itself. */
    public static SocketAddress unwrap(SocketAddress address) {
        return address instanceof Printed p ? p.address : address;
    }

    private static final class Printed extends SocketAddress {
        private static final long serialVersionUID = 1L;
        private final SocketAddress address;

        Printed(SocketAddress address) {
            this.address = address;
        }

        @Override
        public String toString() {
            return format(address);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Printed p && p.address.equals(address);
        }

        @Override
        public int hashCode() {
            return address.hashCode();
        }
    }
}
