package dev.iwarp.ift;

import dev.iwarp.testkit.Hex;

/**
 * Known answers printed by {@code ../shared/spec/vectors/ift_sctp_vectors.py ift} (CRC32C computed
 * twice independently there, in Python), copied here verbatim: indications AI-1..AI-3 and frames
 * F1..F6 sent by node A of AI-1 to node B of AI-2 (receiver VTag 0xC3D4).
 */
final class IftVectors {
    private IftVectors() {
    }

    static final int VTAG_A = 0x1A2B;
    static final int VTAG_B = 0xC3D4;

    /** AI-1: node A to B, phase 0, R|HC|PC (0x70000000), VTag 0x1A2B; CRC 0xE3965021. */
    static final byte[] AI1 = Hex.parse(
            "52 44 44 50 00 01 00 01  70 00 00 00 1a 2b 00 00"
            + "00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00"
            + "00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00"
            + "00 00 00 00 00 00 00 00  00 00 00 00 21 50 96 e3");
    static final int AI1_CRC = 0xE3965021;

    /** AI-2: node B to A, phase 1, PH|R|HC|PC (0xF0000000), VTag 0xC3D4; CRC 0xF4503EE0. */
    static final byte[] AI2 = Hex.parse(
            "52 44 44 50 00 01 00 01  f0 00 00 00 c3 d4 00 00"
            + "00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00"
            + "00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00"
            + "00 00 00 00 00 00 00 00  00 00 00 00 e0 3e 50 f4");
    static final int AI2_CRC = 0xF4503EE0;

    /** AI-3: phase 0, DDP mode, HC|IP|SP (0x26000000), VTag 0x0F0F; CRC 0x839F5B00. */
    static final byte[] AI3 = Hex.parse(
            "52 44 44 50 00 01 00 01  26 00 00 00 0f 0f 00 00"
            + "00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00"
            + "00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00"
            + "00 00 00 00 00 00 00 00  00 00 00 00 00 5b 9f 83");
    static final int AI3_CRC = 0x839F5B00;

    /** F1: zero-length RDMA Write (tagged, L=1), HC+PC; 28 octets. */
    static final byte[] F1 = Hex.parse(
            "00 0e 00 00 c3 d4 c1 40  00 01 a2 00 00 00 7f 3a"
            + "5c 00 10 00 17 8d 26 d4  00 00 00 00");
    /** F2: Send (untagged, L=1, QN 0, MSN 1, MO 0), payload "hello", HC+PC; 37 octets. */
    static final byte[] F2 = Hex.parse(
            "00 12 00 05 c3 d4 41 43  00 00 00 00 00 00 00 00"
            + "00 00 00 01 00 00 00 00  a5 75 3e dd 68 65 6c 6c"
            + "6f 4c bb 71 9a");
    /** F3: RDMA Write (tagged, L=1), payload "RDMA payload 16B", HC+PC; 44 octets. */
    static final byte[] F3 = Hex.parse(
            "00 0e 00 10 c3 d4 c1 40  00 01 a2 00 00 00 7f 3a"
            + "5c 00 10 00 d2 e5 36 38  52 44 4d 41 20 70 61 79"
            + "6c 6f 61 64 20 31 36 42  6a 3f f3 d5");
    /** F4: RDMA Read Request (QN 1, MSN 1, MO 0), HC+PC; 60 octets. */
    static final byte[] F4 = Hex.parse(
            "00 12 00 1c c3 d4 41 41  00 00 00 00 00 00 00 01"
            + "00 00 00 01 00 00 00 00  06 57 37 23 00 01 a2 00"
            + "00 00 7f 3a 5c 00 10 00  00 01 00 00 00 00 b7 00"
            + "00 00 7f 3a 5c 20 00 00  e7 9e 4a da");
    /** F5: F2 without CRCs (HC=0, PC=0); 29 octets. */
    static final byte[] F5 = Hex.parse(
            "00 12 00 05 c3 d4 41 43  00 00 00 00 00 00 00 00"
            + "00 00 00 01 00 00 00 00  68 65 6c 6c 6f");
    /** F6: F2 with header CRC only (HC=1, PC=0); 33 octets. */
    static final byte[] F6 = Hex.parse(
            "00 12 00 05 c3 d4 41 43  00 00 00 00 00 00 00 00"
            + "00 00 00 01 00 00 00 00  a5 75 3e dd 68 65 6c 6c"
            + "6f");
    /** The script's diagnostic: F2's header CRC if the VTag were left out of its coverage. */
    static final int F2_HEADER_CRC_WITHOUT_VTAG = 0x1399E104;

    /** DDP headers and payloads of the frames (what DDP hands IFT and gets back). */
    static final byte[] TAGGED_WRITE_HEADER = Hex.parse("c1 40 00 01 a2 00 00 00 7f 3a 5c 00 10 00");
    static final byte[] SEND_HEADER = Hex.parse("41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00");
    static final byte[] READ_REQUEST_HEADER = Hex.parse("41 41 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00 00");
    static final byte[] HELLO = Hex.parse("68 65 6c 6c 6f");
    static final byte[] PAYLOAD16 = Hex.parse("52 44 4d 41 20 70 61 79 6c 6f 61 64 20 31 36 42");
    static final byte[] READ_REQUEST = Hex.parse(
            "00 01 a2 00 00 00 7f 3a 5c 00 10 00 00 01 00 00 00 00 b7 00 00 00 7f 3a 5c 20 00 00");

    static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int i = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, i, p.length);
            i += p.length;
        }
        return out;
    }
}
