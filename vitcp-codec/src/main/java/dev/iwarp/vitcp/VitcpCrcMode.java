package dev.iwarp.vitcp;

/**
 * The two readings of "exactly the algorithm used for the ethernet CRC" with polynomial 0xDB710641
 * (draft-dicecco-vitcp-01 §3.6).
 */
public enum VitcpCrcMode {
    /**
     * Interpretation A, the default: reflected like Ethernet (octets LSB first, table constant 0x82608EDB),
     * init and final XOR 0xFFFFFFFF, CRC octets little-endian. Check value of "123456789": 0xE07E661E.
     */
    ETHERNET_REFLECTED,
    /**
     * Interpretation B: network bit order (MSB first), init and final XOR 0xFFFFFFFF, CRC octets big-endian.
     * Check value of "123456789": 0x3477C647.
     */
    MSB_FIRST
}
