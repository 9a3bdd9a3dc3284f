package dev.iwarp.verbs;

import dev.iwarp.ddp.TaggedBuffer;
import dev.iwarp.ddp.TaggedBufferTable;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.security.SecureRandom;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The software RNIC: owns the STag table shared by all its queue pairs (libibverbs ibv_context).
 * Thread-safe. {@link #close()} deregisters what is still registered.
 */
public final class RdmaDevice implements AutoCloseable {
    /**
     * Default {@link #maxReadSize()}: 0, no limit beyond the region, as an RNIC's 2^31 message size. Read Responses
     * are segmented lazily as the socket takes them, so a large Read costs the responder bandwidth, not memory; a
     * server that must bound what one 28-octet request makes it send sets a limit ({@code serve}: 1 MiB).
     */
    public static final int DEFAULT_MAX_READ_SIZE = 0;

    private final TaggedBufferTable table = new TaggedBufferTable();
    private final AtomicInteger pdIds = new AtomicInteger();
    private final SecureRandom random = new SecureRandom();
    private final Set<MemoryRegion> regions = ConcurrentHashMap.newKeySet();
    private volatile int maxReadSize = DEFAULT_MAX_READ_SIZE;

    public ProtectionDomain allocPd() {
        return new ProtectionDomain(this, pdIds.incrementAndGet());
    }

    /**
     * The largest RDMA Read this device serves per request; a larger Read Request is answered with a Terminate
     * (RDMAP Remote Operation, catastrophic error localized to the stream). 0 means no limit.
     */
    public void setMaxReadSize(int octets) {
        if (octets < 0) {
            throw new IllegalArgumentException("max read size " + octets);
        }
        this.maxReadSize = octets;
    }

    /** The largest RDMA Read served per request; 0 for no limit. */
    public int maxReadSize() {
        return maxReadSize;
    }

    /** The STag table (STag to region, PD, bounds, rights, validity). */
    public TaggedBufferTable table() {
        return table;
    }

    MemoryRegion register(ProtectionDomain pd, ByteBuf memory, long iova, Set<Access> access) {
        // the table keeps its own reference to the memory (index 0 to capacity) until deregistration.
        // A retained slice rather than slice(): of a pooled buffer it is a recycled derived buffer, and so
        // is every slice later cut from it (one per work request and per segment; issue 13)
        ByteBuf whole = memory.retainedSlice(0, memory.capacity());
        TaggedBuffer t;
        try {
            t = table.register(pd, whole, iova, Access.toFlags(access), access.contains(Access.REMOTE_INVALIDATE));
        } finally {
            whole.release();
        }
        MemoryRegion mr = new MemoryRegion(pd, t, access);
        regions.add(mr);
        return mr;
    }

    MemoryRegion registerOnDemand(ProtectionDomain pd, int length, ByteBufAllocator allocator, long iova,
                                  Set<Access> access) {
        TaggedBuffer t = table.registerOnDemand(pd, length, allocator, iova, Access.toFlags(access),
                access.contains(Access.REMOTE_INVALIDATE));
        MemoryRegion mr = new MemoryRegion(pd, t, access);
        regions.add(mr);
        return mr;
    }

    void deregister(MemoryRegion mr) {
        regions.remove(mr);
        table.deregister(mr.stag());
    }

    /** Deregisters every region still registered, releasing the device's references to their memory. */
    @Override
    public void close() {
        for (MemoryRegion mr : regions) {
            deregister(mr);
        }
    }

    /** A page-aligned base TO that is hard to guess and leaves room for 2^40 octets. */
    long randomIova() {
        return (random.nextLong() & 0x00FF_FFFF_F000L) << 8;
    }
}
