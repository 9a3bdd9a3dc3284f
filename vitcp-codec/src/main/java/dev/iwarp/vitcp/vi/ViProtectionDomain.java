package dev.iwarp.vitcp.vi;

import io.netty.buffer.ByteBuf;

import java.util.EnumSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Memory registration scope (VIA protection tag; the verbs API calls it ProtectionDomain). Regions registered here are the only
 * memory a peer's RDMA or a receive can touch on endpoints of this domain. Thread-safe.
 */
public final class ViProtectionDomain {
    private static final AtomicInteger DOMAINS = new AtomicInteger();

    private final ConcurrentHashMap<Integer, ViMemoryRegion> regions = new ConcurrentHashMap<>();
    private final AtomicInteger nextHandle;

    /** A new, empty protection domain. */
    public ViProtectionDomain() {
        // handles of different domains differ in their top octet, so a stray handle rarely aliases
        nextHandle = new AtomicInteger((DOMAINS.incrementAndGet() & 0xFF) << 24 | 1);
    }

    /**
     * Registers all of {@code buffer} (indices 0..capacity) at virtual address {@code address}.
     * Ownership: the region retains the buffer and releases it on {@link ViMemoryRegion#deregister()}; the caller
     * keeps (and releases) its own reference.
     */
    public ViMemoryRegion register(ByteBuf buffer, long address, ViAccess... access) {
        EnumSet<ViAccess> a = EnumSet.noneOf(ViAccess.class);
        a.addAll(java.util.List.of(access));
        int handle = nextHandle.getAndIncrement();
        ViMemoryRegion r = new ViMemoryRegion(this, handle, address, buffer.retain(), a);
        regions.put(handle, r);
        return r;
    }

    /** Registers at an address chosen by the domain (the handle shifted into the upper half). */
    public ViMemoryRegion register(ByteBuf buffer, ViAccess... access) {
        return register(buffer, ((long) (nextHandle.get() & 0x7FFFFFFF)) << 32, access);
    }

    /** The live region with this memory handle, or null. */
    public ViMemoryRegion region(int memoryHandle) {
        return regions.get(memoryHandle);
    }

    /**
     * Deregisters every region still registered here, releasing the domain's reference to each buffer: for an
     * owner that ends everything at once (a provider closing, as the iWARP device deregisters its regions when
     * it closes). Call once no endpoint of this domain runs any more.
     */
    public void deregisterAll() {
        for (ViMemoryRegion r : regions.values()) {
            r.deregister();
        }
    }

    void remove(ViMemoryRegion r) {
        regions.remove(r.handle(), r);
    }
}
