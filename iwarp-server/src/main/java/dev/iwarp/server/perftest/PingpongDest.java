package dev.iwarp.server.perftest;

import java.nio.ByteBuffer;
import java.util.HexFormat;

/**
 * perftest's {@code pingpong_dest}, the per-QP destination exchanged on the control connection: every field
 * big-endian. Up to perftest 6.28 it is 56 octets (lid, out_reads, qpn, psn, rkey, 4 octets of struct padding, vaddr,
 * 16-octet GID, srqn, gid_index); from 6.29 on 64 octets, with a u64 {@code tail_markers_vaddr} at offset 32 that
 * moves the GID to 40. Over iWARP with RDMA-CM only {@link #rkey} (the STag) and {@link #vaddr} (the TO) matter.
 */
public record PingpongDest(int lid, int outReads, int qpn, int psn, int rkey, long vaddr, long tailMarkersVaddr,
                           byte[] gid, int srqn, int gidIndex) {
    public static final int LENGTH = 56;
    public static final int WIDE_LENGTH = 64;

    public PingpongDest {
        gid = gid == null ? new byte[16] : gid.clone();
        if (gid.length != 16) {
            throw new IllegalArgumentException("a GID has 16 octets");
        }
    }

    /** Ours: LID 0, the given qpn/psn/out_reads, zero GID (perftest only prints them). */
    public static PingpongDest of(int qpn, int psn, int outReads, int rkey, long vaddr) {
        return new PingpongDest(0, outReads, qpn, psn & 0xffffff, rkey, vaddr, 0, null, 0, 0);
    }

    /** Decodes by the length received: 56 or 64 octets; anything else is refused. */
    public static PingpongDest decode(byte[] m, int length) {
        if (length != LENGTH && length != WIDE_LENGTH) {
            throw new IllegalArgumentException("destination message of " + length + " octets (expected " + LENGTH
                    + ", or " + WIDE_LENGTH + " from perftest 6.29 on)");
        }
        ByteBuffer b = ByteBuffer.wrap(m, 0, length);
        int lid = b.getInt(0);
        int outReads = b.getInt(4);
        int qpn = b.getInt(8);
        int psn = b.getInt(12);
        int rkey = b.getInt(16);
        long vaddr = b.getLong(24);
        boolean wide = length == WIDE_LENGTH;
        long tail = wide ? b.getLong(32) : 0;
        int gidAt = wide ? 40 : 32;
        byte[] gid = new byte[16];
        System.arraycopy(m, gidAt, gid, 0, 16);
        return new PingpongDest(lid, outReads, qpn, psn, rkey, vaddr, tail, gid, b.getInt(gidAt + 16), b.getInt(gidAt + 20));
    }

    /** 56 octets, or 64 for a peer of 6.29 or later ({@code wide}); the padding at 20..23 is zero. */
    public byte[] encode(boolean wide) {
        ByteBuffer b = ByteBuffer.allocate(wide ? WIDE_LENGTH : LENGTH);
        b.putInt(lid).putInt(outReads).putInt(qpn).putInt(psn).putInt(rkey).putInt(0).putLong(vaddr);
        if (wide) {
            b.putLong(tailMarkersVaddr);
        }
        b.put(gid).putInt(srqn).putInt(gidIndex);
        return b.array();
    }

    @Override
    public byte[] gid() {
        return gid.clone();
    }

    /** perftest's two address lines. */
    public String describe(String which) {
        StringBuilder g = new StringBuilder();
        for (int i = 0; i < 16; i++) {
            g.append(i == 0 ? "" : ":").append(HexFormat.of().toHexDigits(gid[i]));
        }
        return String.format(" %s address: LID %04x QPN %#06x PSN %#08x%n GID: %s", which, lid, qpn, psn, g);
    }
}
