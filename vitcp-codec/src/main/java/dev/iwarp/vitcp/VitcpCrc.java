package dev.iwarp.vitcp;

import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;

/**
 * The VI/TCP trailer CRC: generator polynomial 0xDB710641 (draft-dicecco-vitcp-01 §3.6), table driven.
 * The draft's recipe (complement the first 32 bits, divide the segment with a zeroed CRC field, complement)
 * equals the register algorithm with init/final XOR 0xFFFFFFFF over the segment without the trailer
 * (draft-dicecco-vitcp-01 §3.6), which is what this class computes.
 */
public final class VitcpCrc {
    /** draft-dicecco-vitcp-01 §3.6: "In hex format with the x^32 term removed, this is 0xDB710641". */
    public static final int POLYNOMIAL = 0xDB710641;
    public static final int INITIAL = 0xFFFFFFFF;

    private static final int[] REFLECTED_TABLE = new int[256];
    private static final int[] NORMAL_TABLE = new int[256];

    static {
        int reflectedPoly = Integer.reverse(POLYNOMIAL); // 0x82608EDB
        for (int n = 0; n < 256; n++) {
            int c = n;
            for (int k = 0; k < 8; k++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ reflectedPoly : c >>> 1;
            }
            REFLECTED_TABLE[n] = c;
            int d = n << 24;
            for (int k = 0; k < 8; k++) {
                d = (d & 0x80000000) != 0 ? (d << 1) ^ POLYNOMIAL : d << 1;
            }
            NORMAL_TABLE[n] = d;
        }
    }

    private VitcpCrc() {
    }

    /** Updates the CRC register with {@code length} octets of {@code buf} from {@code index}; no reader index change. */
    public static int update(VitcpCrcMode mode, int register, ByteBuf buf, int index, int length) {
        if (length == 0) {
            return register;
        }
        if (buf.hasArray()) {
            return update(mode, register, buf.array(), buf.arrayOffset() + index, length);
        }
        Processor p = new Processor(mode, register);
        buf.forEachByte(index, length, p);
        return p.register;
    }

    public static int update(VitcpCrcMode mode, int register, byte[] data, int offset, int length) {
        int c = register;
        int end = offset + length;
        if (mode == VitcpCrcMode.ETHERNET_REFLECTED) {
            int[] t = REFLECTED_TABLE;
            for (int i = offset; i < end; i++) {
                c = t[(c ^ data[i]) & 0xFF] ^ (c >>> 8);
            }
        } else {
            int[] t = NORMAL_TABLE;
            for (int i = offset; i < end; i++) {
                c = t[((c >>> 24) ^ data[i]) & 0xFF] ^ (c << 8);
            }
        }
        return c;
    }

    public static int finish(int register) {
        return ~register;
    }

    /** CRC value of a whole byte range. */
    public static int compute(VitcpCrcMode mode, ByteBuf buf, int index, int length) {
        return finish(update(mode, INITIAL, buf, index, length));
    }

    public static int compute(VitcpCrcMode mode, byte[] data) {
        return finish(update(mode, INITIAL, data, 0, data.length));
    }

    /** Writes the CRC field in the mode's octet order (A: little-endian like Ethernet's FCS, B: big-endian). */
    public static void writeCrc(VitcpCrcMode mode, int value, ByteBuf out) {
        if (mode == VitcpCrcMode.ETHERNET_REFLECTED) {
            out.writeIntLE(value);
        } else {
            out.writeInt(value);
        }
    }

    public static int getCrc(VitcpCrcMode mode, ByteBuf in, int index) {
        return mode == VitcpCrcMode.ETHERNET_REFLECTED ? in.getIntLE(index) : in.getInt(index);
    }

    private static final class Processor implements ByteProcessor {
        private final boolean reflected;
        int register;

        Processor(VitcpCrcMode mode, int register) {
            this.reflected = mode == VitcpCrcMode.ETHERNET_REFLECTED;
            this.register = register;
        }

        @Override
        public boolean process(byte b) {
            int c = register;
            register = reflected ? REFLECTED_TABLE[(c ^ b) & 0xFF] ^ (c >>> 8)
                    : NORMAL_TABLE[((c >>> 24) ^ b) & 0xFF] ^ (c << 8);
            return true;
        }
    }
}
