package dev.iwarp.vitcp.vi;

import io.netty.buffer.ByteBuf;

import java.util.Set;

/**
 * Registered memory: a memory handle plus a virtual address range (VI semantics, draft-dicecco-vitcp-01 §2.2.2.1:
 * "Memory handles are used to identify the region and to qualify virtual memory addresses"), unlike the STag plus
 * zero-based offset of iWARP verbs.
 */
public final class ViMemoryRegion {
    private final ViProtectionDomain pd;
    private final int handle;
    private final long address;
    private final ByteBuf buffer;
    private final Set<ViAccess> access;
    private volatile boolean valid = true;

    ViMemoryRegion(ViProtectionDomain pd, int handle, long address, ByteBuf buffer, Set<ViAccess> access) {
        this.pd = pd;
        this.handle = handle;
        this.address = address;
        this.buffer = buffer;
        this.access = Set.copyOf(access);
    }

    /** The protection domain the region belongs to. */
    public ViProtectionDomain protectionDomain() {
        return pd;
    }

    /** The memory handle a peer names the region with. */
    public int handle() {
        return handle;
    }

    /** The virtual address of the region's first octet, as a peer names it. */
    public long address() {
        return address;
    }

    /** Octets registered. */
    public int length() {
        return buffer.capacity();
    }

    /** The registered buffer; read and write it with absolute indices (index = address - {@link #address()}). */
    public ByteBuf buffer() {
        return buffer;
    }

    /** Whether remote access {@code a} was granted. */
    public boolean allows(ViAccess a) {
        return access.contains(a);
    }

    /** Whether the region is still registered. */
    public boolean isValid() {
        return valid;
    }

    /** Whether [address, address+length) lies inside this region. */
    public boolean contains(long addr, long length) {
        return length >= 0 && addr >= address && addr - address <= length() - length;
    }

    /** A data segment of this region from {@code offset} (relative to the region start). */
    public ViDataSegment segment(int offset, int length) {
        return new ViDataSegment(this, address + offset, length);
    }

    /** A data segment covering the whole region. */
    public ViDataSegment all() {
        return segment(0, length());
    }

    /** Deregisters and releases the region's reference to the buffer. Later remote access gets a protection error. */
    public synchronized void deregister() {
        if (valid) {
            valid = false;
            pd.remove(this);
            buffer.release();
        }
    }

    @Override
    public String toString() {
        return "ViMemoryRegion(handle=0x" + Integer.toHexString(handle) + ", address=0x" + Long.toHexString(address)
                + ", length=" + length() + ", " + access + (valid ? "" : ", deregistered") + ")";
    }
}
