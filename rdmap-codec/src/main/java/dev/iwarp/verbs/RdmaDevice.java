package dev.iwarp.verbs;

import dev.iwarp.ddp.MemoryAccount;
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

    /**
     * Default {@link #sendQueueDepth()}: 1024 requests posted and not completed per queue pair, as deep as
     * {@code bench --depth} goes and 8 times perftest's default (128). The send queue holds the application's own
     * request objects; the bound keeps a ULP that posts on every peer message (rping's answer to each advertisement)
     * from queueing without limit while its peer withholds ORD or stops reading.
     */
    public static final int DEFAULT_SEND_QUEUE_DEPTH = 1024;

    private final TaggedBufferTable table = new TaggedBufferTable();
    private final AtomicInteger pdIds = new AtomicInteger();
    private final SecureRandom random = new SecureRandom();
    private final Set<MemoryRegion> regions = ConcurrentHashMap.newKeySet();
    private volatile int maxReadSize = DEFAULT_MAX_READ_SIZE;
    private volatile int sendQueueDepth = DEFAULT_SEND_QUEUE_DEPTH;
    private volatile long readResponseRate;
    private volatile MemoryBudget memoryBudget;

    /** A protection domain; with a {@link MemoryBudget} set, with an account of its own in it. */
    public ProtectionDomain allocPd() {
        MemoryBudget b = memoryBudget;
        return new ProtectionDomain(this, pdIds.incrementAndGet(), b == null ? MemoryAccount.UNLIMITED : b.newAccount());
    }

    /**
     * The budget of memory committed on peers' behalf for protection domains allocated from now on (each gets an
     * account in it; {@code null}: none, the default). See {@link MemoryBudget}.
     */
    public void setMemoryBudget(MemoryBudget budget) {
        this.memoryBudget = budget;
    }

    /** The budget new protection domains draw from, or {@code null}. */
    public MemoryBudget memoryBudget() {
        return memoryBudget;
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

    /**
     * The send-queue depth of queue pairs created on this device from now on, unless set for one
     * ({@code ConnectOptions.sendQueueDepth}, {@code IwarpConnectionRequest.sendQueueDepth}): a
     * {@link QueuePair#postSend} beyond it fails at once with {@link SendQueueFullException}.
     */
    public void setSendQueueDepth(int requests) {
        if (requests < 1) {
            throw new IllegalArgumentException("send queue depth " + requests);
        }
        this.sendQueueDepth = requests;
    }

    /** The send-queue depth given to new queue pairs. */
    public int sendQueueDepth() {
        return sendQueueDepth;
    }

    /**
     * Octets per second of RDMA Read Responses each queue pair created from now on sends at most, unless set for
     * one ({@code ConnectOptions.readResponseRate}, {@code IwarpConnectionRequest.readResponseRate}); 0, the
     * default, means no limit, as an RNIC. A server sets one so that what a peer's 28-octet Read Requests make it
     * send is a budget per connection ({@code serve}: 1 GiB/s).
     */
    public void setReadResponseRate(long octetsPerSecond) {
        if (octetsPerSecond < 0) {
            throw new IllegalArgumentException("read response rate " + octetsPerSecond);
        }
        this.readResponseRate = octetsPerSecond;
    }

    /** Read Response octets per second per new queue pair at most; 0 for no limit. */
    public long readResponseRate() {
        return readResponseRate;
    }

    /**
     * The STag table (STag to region, PD, bounds, rights, validity): not API, the engine reaches it through
     * {@link dev.iwarp.verbs.internal.VerbsAccess#taggedBufferTable}.
     */
    TaggedBufferTable table() {
        return table;
    }

    MemoryRegion register(ProtectionDomain pd, ByteBuf memory, long iova, Set<Access> access) {
        // the table keeps its own reference to the memory (index 0 to capacity) until deregistration.
        // A retained slice rather than slice(): of a pooled buffer it is a recycled derived buffer, and so
        // is every slice later cut from it (one per work request and per segment)
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
        TaggedBuffer t = table.registerOnDemand(pd, length, allocator, pd.memoryAccount(), iova,
                Access.toFlags(access), access.contains(Access.REMOTE_INVALIDATE));
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
