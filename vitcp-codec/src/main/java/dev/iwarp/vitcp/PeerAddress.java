package dev.iwarp.vitcp;

import io.netty.channel.ChannelHandlerContext;

import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * A peer's address as this module's log lines write it: {@code 127.0.0.1:5555}, {@code [::1]:5555} (RFC 5952 §4.2),
 * the form the tools and serve use, rather than Netty's channel form {@code [id: 0x..., L:/... - R:/...]} or
 * {@link InetSocketAddress#toString}'s {@code /127.0.0.1:5555}. Still an {@link InetSocketAddress}, so that whatever
 * inspects log arguments (a per-peer log budget) finds the peer. A copy of it lives in each framing module, which
 * depend on nothing but Netty.
 */
public final class PeerAddress extends InetSocketAddress {
    private static final long serialVersionUID = 1L;

    private PeerAddress(InetSocketAddress a) {
        super(a.getAddress(), a.getPort());
    }

    /** {@code address} as a log argument; an address that is not an IP one (or is unresolved) as it is. */
    public static Object of(SocketAddress address) {
        return address instanceof InetSocketAddress a && a.getAddress() != null && !(a instanceof PeerAddress)
                ? new PeerAddress(a) : address == null ? "?" : address;
    }

    /** The remote address of {@code ctx}'s channel, as {@link #of(SocketAddress)}. */
    public static Object of(ChannelHandlerContext ctx) {
        return of(ctx.channel().remoteAddress());
    }

    @Override
    public String toString() {
        if (!(getAddress() instanceof Inet6Address v6)) {
            return getAddress().getHostAddress() + ":" + getPort();
        }
        byte[] b = v6.getAddress();
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) {
            g[i] = (b[2 * i] & 0xFF) << 8 | b[2 * i + 1] & 0xFF;
        }
        int best = -1;
        int bestLen = 1;
        for (int i = 0, j; i < 8; i = Math.max(j, i + 1)) {
            for (j = i; j < 8 && g[j] == 0; j++) {
                // the run of zero groups starting at i
            }
            if (j - i > bestLen) {
                best = i;
                bestLen = j - i;
            }
        }
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < 8; i++) {
            if (i == best) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.charAt(sb.length() - 1) != ':' && sb.length() > 1) {
                sb.append(':');
            }
            sb.append(Integer.toHexString(g[i]));
        }
        if (v6.getScopeId() != 0) {
            sb.append('%').append(v6.getScopeId());
        }
        return sb.append("]:").append(getPort()).toString();
    }
}
