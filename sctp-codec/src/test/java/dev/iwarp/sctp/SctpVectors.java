package dev.iwarp.sctp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.sctp.SctpMessage;

/**
 * Known answers printed by {@code ../shared/spec/vectors/ift_sctp_vectors.py sctp} (digest §14),
 * copied here as hex: the five indication parameters and the user data of messages S1-S6.
 */
final class SctpVectors {
    static final String[] PARAMETERS = {
        "c0 06 00 08 00 00 00 01", "c0 06 00 08 00 00 00 02", "c0 06 00 08 00 00 00 03",
        "c0 06 00 08 00 00 00 04", "c0 06 00 08 00 00 00 05",
    };

    /** RDMA Write, tagged, L=1, "RDMA payload 16B"; mode 3, flags 0, AWS 1. */
    static final String S1 = "00 00 03 00 00 01 a2 00 00 00 7f 3a 5c 00 10 00 00 00 00 01 c1 40 00 01 a2 00 00 00"
            + " 7f 3a 5c 00 10 00 52 44 4d 41 20 70 61 79 6c 6f 61 64 20 31 36 42";
    /** Send, QN 0, MSN 1, "hello"; mode 0, flags N, AWS 2. */
    static final String S2 = "00 00 00 40 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 02 41 43 00 00 00 00 00 00"
            + " 00 00 00 00 00 01 00 00 00 00 68 65 6c 6c 6f";
    /** Read Request, QN 1, MSN 1; mode 0, flags N, AWS 3. */
    static final String S3 = "00 00 00 40 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 03 41 41 00 00 00 00 00 00"
            + " 00 01 00 00 00 01 00 00 00 00 00 01 a2 00 00 00 7f 3a 5c 00 10 00 00 01 00 00 00 00 b7 00 00 00"
            + " 7f 3a 5c 20 00 00";
    /** Read Response, tagged, L=1; mode 3, flags N, AWS 4. */
    static final String S4 = "00 00 03 40 00 01 a2 00 00 00 7f 3a 5c 00 10 00 00 00 00 04 c1 42 00 01 a2 00 00 00"
            + " 7f 3a 5c 00 10 00 52 44 4d 41 20 70 61 79 6c 6f 61 64 20 31 36 42";
    /** Send with Invalidate 0x0001A300, MSN 2; mode 0, flags N|T, tag = the STag, AWS 5. */
    static final String S5 = "00 00 00 60 00 01 a3 00 00 00 00 00 00 00 00 00 00 00 00 05 41 44 00 01 a3 00 00 00"
            + " 00 00 00 00 00 02 00 00 00 00 68 65 6c 6c 6f";
    /** DDP_WITH_TAG sender: 16-octet extension, mode 2, flags N, tag 7, offset 0x400, "0123456789". */
    static final String S6 = "00 00 02 40 00 00 00 07 00 00 00 00 00 00 04 00 30 31 32 33 34 35 36 37 38 39";

    /** S1-S5 with the fields of their extensions: mode, flags, tag, offset, AWS. */
    static final Object[][] RDMA = {
        {S1, PlacementMode.RDMA_PLACEMENT, 0x00, 0x0001A200, 0x00007F3A5C001000L, 1L},
        {S2, PlacementMode.NO_PLACEMENT, 0x40, 0, 0L, 2L},
        {S3, PlacementMode.NO_PLACEMENT, 0x40, 0, 0L, 3L},
        {S4, PlacementMode.RDMA_PLACEMENT, 0x40, 0x0001A200, 0x00007F3A5C001000L, 4L},
        {S5, PlacementMode.NO_PLACEMENT, 0x60, 0x0001A300, 0L, 5L},
    };

    private SctpVectors() {
    }

    static byte[] bytes(String hex) {
        String h = hex.replace(" ", "");
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    static ByteBuf buf(String hex) {
        return Unpooled.wrappedBuffer(bytes(hex));
    }

    /** An inbound message as the channel would deliver it: stream 0, PPID 0, unordered. */
    static SctpMessage message(byte[] userData) {
        return new SctpMessage(0, 0, true, Unpooled.wrappedBuffer(userData));
    }

    static byte[] readable(ByteBuf b) {
        byte[] a = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), a);
        return a;
    }
}
