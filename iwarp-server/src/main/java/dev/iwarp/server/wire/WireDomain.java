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
}
