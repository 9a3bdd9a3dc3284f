package dev.iwarp.server.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/** A protection domain on either wire (verbs ProtectionDomain, VIA protection tag). Thread-safe. */
public interface WireDomain {
    /** Registers all of {@code memory}; the caller keeps ownership of (and releases) its reference. */
    WireRegion register(ByteBuf memory, WireAccess... access);

    /**
     * Registers {@code length} octets whose memory, zeroed, comes from {@code alloc} and goes back at {@link
     * WireRegion#deregister()}. iWARP allocates it on demand (at first use; {@link WireRegion#discard()} gives it
     * back until the next one), so an idle connection's regions cost nothing; VI/TCP allocates it at once.
     */
    WireRegion registerOnDemand(int length, ByteBufAllocator alloc, WireAccess... access);

    /**
     * Where memory committed for this domain's peer is reserved (iWARP: the protection domain's account of the
     * device's memory budget; on-demand regions draw from it themselves); unlimited unless the wire has one.
     */
    default dev.iwarp.ddp.MemoryAccount memoryAccount() {
        return dev.iwarp.ddp.MemoryAccount.UNLIMITED;
    }
}
