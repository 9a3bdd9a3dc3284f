package dev.iwarp.server;

import java.net.Inet4Address;
import java.net.InetAddress;

/**
 * The source a peer's limits are counted against: its address's leading {@code bits} (a /24 for IPv4, a /64 for IPv6
 * by default). A host that holds a prefix can use any address in it, so every per-source budget is per prefix.
 * Immutable map key.
 */
record SourcePrefix(long high, long low, int bits, boolean v6) {

    /** {@code address}'s prefix of {@code v4Bits} (IPv4) or {@code v6Bits} (IPv6). */
    static SourcePrefix of(InetAddress address, int v4Bits, int v6Bits) {
        byte[] a = address.getAddress();
        boolean v6 = !(address instanceof Inet4Address);
        int bits = v6 ? v6Bits : v4Bits;
        long high = 0;
        long low = 0;
        for (int i = 0; i < a.length; i++) {
            int keep = Math.max(0, Math.min(8, bits - 8 * i));
            long octet = a[i] & (0xFF00 >>> keep) & 0xFF;
            if (v6 && i < 8) {
                high = high << 8 | octet;
            } else {
                low = low << 8 | octet;
            }
        }
        return new SourcePrefix(high, low, bits, v6);
    }

    @Override
    public String toString() {
        if (!v6) {
            return (low >>> 24 & 0xFF) + "." + (low >>> 16 & 0xFF) + "." + (low >>> 8 & 0xFF) + "." + (low & 0xFF)
                    + "/" + bits;
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            long word = i < 4 ? high >>> (48 - 16 * i) : low >>> (48 - 16 * (i - 4));
            b.append(i == 0 ? "" : ":").append(Long.toHexString(word & 0xFFFF));
        }
        return b.append('/').append(bits).toString();
    }
}
