package dev.iwarp.server.wire;

import io.netty.buffer.ByteBuf;

/** A protection domain on either wire (verbs ProtectionDomain, VIA protection tag). Thread-safe. */
public interface WireDomain {
    /** Registers all of {@code memory}; the caller keeps ownership of (and releases) its reference. */
    WireRegion register(ByteBuf memory, WireAccess... access);
}
