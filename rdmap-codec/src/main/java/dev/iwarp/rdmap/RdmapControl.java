package dev.iwarp.rdmap;

/**
 * The RDMAP control octet (RFC 5040 §4.1), carried as DDP's RsvdULP[0:7]:
 * <pre>
 *  | RV (2) | Rsv (2) | OpCode (4) |
 *    0xC0     0x30       0x0F
 * </pre>
 */
public final class RdmapControl {
    /** RV field. */
    public static final int VERSION_MASK = 0xC0;
    /** Reserved bits: sent 0, not checked (RFC 5040 §4.1). */
    public static final int RSV_MASK = 0x30;
    /** OpCode field. */
    public static final int OPCODE_MASK = 0x0F;
    /** RV of RFC 5040 (0 is the RDMAC version). */
    public static final int RDMAP_VERSION_1 = 1;

    private RdmapControl() {
    }

    /** RV of a control octet. */
    public static int version(int control) {
        return (control & VERSION_MASK) >>> 6;
    }

    /** OpCode of a control octet (0..15; see {@link RdmapOpcode#fromValue}). */
    public static int opcode(int control) {
        return control & OPCODE_MASK;
    }

    /** The control octet for a version and an OpCode; Rsv is 0. */
    public static int encode(int version, int opcode) {
        return (version << 6 & VERSION_MASK) | (opcode & OPCODE_MASK);
    }

    /** The version-1 control octet of a message type. */
    public static int encode(RdmapOpcode opcode) {
        return encode(RDMAP_VERSION_1, opcode.value());
    }

    /** The control octet of a message type for a stream's RDMAP version (0 on an RDMAC stream, else 1). */
    public static int encode(int version, RdmapOpcode opcode) {
        return encode(version, opcode.value());
    }
}
