package dev.iwarp.vitcp;

/**
 * The VI/TCP RDMA Header (16 octets). draft-dicecco-vitcp-01 §3.4.
 *
 * @param rdmaAddress    64-bit data address of the first data segment of the remote descriptor
 * @param memoryHandle   the Registered Memory Handle qualifying that address
 * @param rdmaLength     total octets of the message across all its segments (unsigned 32-bit)
 */
public record ViRdmaHeader(long rdmaAddress, int memoryHandle, int rdmaLength) {

    public static final int LENGTH = 16;

    public long rdmaLengthUnsigned() {
        return rdmaLength & 0xFFFFFFFFL;
    }

    @Override
    public String toString() {
        return "RdmaHeader(address=0x" + Long.toHexString(rdmaAddress) + ", handle=0x"
                + Integer.toHexString(memoryHandle) + ", length=" + rdmaLengthUnsigned() + ")";
    }
}
