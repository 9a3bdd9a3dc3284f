package dev.iwarp.verbs;

import dev.iwarp.ddp.MemoryAccount;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.List;

/**
 * A protection domain (libibverbs ibv_pd): memory regions and queue pairs of one domain only ever
 * reach each other; an STag of another domain fails with "STag not associated" (RFC 5041 §7.2).
 */
public final class ProtectionDomain {
    private final RdmaDevice device;
    private final int id;
    private final MemoryAccount account;

    ProtectionDomain(RdmaDevice device, int id, MemoryAccount account) {
        this.device = device;
        this.id = id;
        this.account = account;
    }

    /**
     * Where what this domain's peer makes us commit is reserved: its account of the device's {@link MemoryBudget}
     * (regions registered on demand draw from it as they get memory), or {@link MemoryAccount#UNLIMITED} when the
     * device had none when the domain was allocated. A ULP reserves what else it commits for the peer here too.
     */
    public MemoryAccount memoryAccount() {
        return account;
    }

    public RdmaDevice device() {
        return device;
    }

    /** A number for logs. */
    public int id() {
        return id;
    }

    /**
     * Registers the whole capacity of {@code memory} (index 0 to capacity) with a random base TO.
     * The device keeps its own reference to {@code memory} until {@link MemoryRegion#deregister()}
     * (or {@link RdmaDevice#close()}); the caller keeps and releases its own reference.
     */
    public MemoryRegion register(ByteBuf memory, Access... access) {
        return register(memory, device.randomIova(), access);
    }

    /** Registers the whole capacity of {@code memory} with the given base TO (iova). */
    public MemoryRegion register(ByteBuf memory, long iova, Access... access) {
        EnumSet<Access> rights = access.length == 0 ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(List.of(access));
        return device.register(this, memory, iova, rights);
    }

    /**
     * Registers {@code length} octets that get their memory on demand, with a random base TO: no memory until the
     * region is first used (a peer's RDMA Write or Read, a receive placed into it, a local {@link
     * MemoryRegion#memory()}), then a zeroed direct buffer from {@code allocator}, given back by {@link
     * MemoryRegion#discard()} (the octets read as zeros again) and by {@link MemoryRegion#deregister()}. A peer
     * sees an ordinary region. For memory most connections never use, e.g. a server's per-connection target: idle,
     * it costs no buffer memory.
     */
    public MemoryRegion registerOnDemand(int length, ByteBufAllocator allocator, Access... access) {
        return registerOnDemand(length, allocator, device.randomIova(), access);
    }

    /** As {@link #registerOnDemand(int, ByteBufAllocator, Access...)}, with the given base TO (iova). */
    public MemoryRegion registerOnDemand(int length, ByteBufAllocator allocator, long iova, Access... access) {
        EnumSet<Access> rights = access.length == 0 ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(List.of(access));
        return device.registerOnDemand(this, length, allocator, iova, rights);
    }

    /** Registers a {@link ByteBuffer} (heap or direct) from position 0 to its capacity. */
    public MemoryRegion register(ByteBuffer memory, Access... access) {
        ByteBuffer whole = memory.duplicate();
        whole.clear();
        return register(Unpooled.wrappedBuffer(whole), access);
    }

    @Override
    public String toString() {
        return "PD#" + id;
    }
}
