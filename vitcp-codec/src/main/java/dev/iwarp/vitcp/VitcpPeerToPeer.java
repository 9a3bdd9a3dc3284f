package dev.iwarp.vitcp;

import java.net.InetAddress;
import java.util.Arrays;

/** Which end of a peer-to-peer connection is active. draft-dicecco-vitcp-01 §4. */
public final class VitcpPeerToPeer {
    private VitcpPeerToPeer() {
    }

    /**
     * True when this end has the "higher" address and therefore connects (§4: addresses compared as unsigned
     * 32- or 128-bit numbers). Addresses of different families compare as IPv4-mapped IPv6. On equal addresses
     * (both ends on one host, which the draft does not cover) the higher discriminator connects.
     */
    public static boolean isActive(InetAddress local, InetAddress remote, byte[] localDiscriminator,
                                   byte[] remoteDiscriminator) {
        int c = Arrays.compareUnsigned(as128(local), as128(remote));
        if (c == 0) {
            c = Arrays.compareUnsigned(localDiscriminator, remoteDiscriminator);
        }
        if (c == 0) {
            throw new IllegalArgumentException("peer-to-peer ends have the same address and discriminator");
        }
        return c > 0;
    }

    private static byte[] as128(InetAddress a) {
        byte[] b = a.getAddress();
        if (b.length == 16) {
            return b;
        }
        byte[] m = new byte[16];
        m[10] = (byte) 0xFF;
        m[11] = (byte) 0xFF;
        System.arraycopy(b, 0, m, 12, 4);
        return m;
    }
}
