package dev.iwarp.server.wire;

import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.ProtectionDomain;
import io.netty.buffer.ByteBuf;

/** A verbs protection domain as a {@link WireDomain} of {@link IwarpWire}: its regions are {@link IwarpRegion}s. */
record IwarpDomain(ProtectionDomain pd) implements WireDomain {
    @Override
    public WireRegion register(ByteBuf memory, WireAccess... access) {
        return new IwarpRegion(pd.register(memory, map(access)));
    }

    @Override
    public WireRegion registerOnDemand(int length, io.netty.buffer.ByteBufAllocator alloc, WireAccess... access) {
        return new IwarpRegion(pd.registerOnDemand(length, alloc, map(access)));
    }

    @Override
    public dev.iwarp.ddp.MemoryAccount memoryAccount() {
        return pd.memoryAccount();
    }

    /** The verbs protection domain behind {@code domain}, which must be one of this wire's. */
    static ProtectionDomain pdOf(WireDomain domain) {
        if (domain instanceof IwarpDomain d) {
            return d.pd;
        }
        throw new IllegalArgumentException("not an iWARP domain: " + domain);
    }

    private static Access[] map(WireAccess... access) {
        Access[] a = new Access[access.length];
        for (int i = 0; i < access.length; i++) {
            a[i] = switch (access[i]) {
                case LOCAL_WRITE -> Access.LOCAL_WRITE;
                case REMOTE_READ -> Access.REMOTE_READ;
                case REMOTE_WRITE -> Access.REMOTE_WRITE;
            };
        }
        return a;
    }
}
