package dev.iwarp.server.wire;

import dev.iwarp.vitcp.vi.ViProtectionDomain;
import dev.iwarp.vitcp.vi.ViAccess;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.util.ArrayList;
import java.util.List;

/** A VI protection domain as a {@link WireDomain} of {@link VitcpWire}: its regions are {@link VitcpRegion}s. */
record VitcpDomain(ViProtectionDomain pd) implements WireDomain {
    @Override
    public WireRegion register(ByteBuf memory, WireAccess... access) {
        return new VitcpRegion(pd.register(memory, map(access)), null);
    }

    @Override
    public WireRegion registerOnDemand(int length, ByteBufAllocator alloc, WireAccess... access) {
        ByteBuf memory = alloc.directBuffer(length, length); // VI regions have no on-demand memory: now
        memory.setZero(0, length);
        try {
            return new VitcpRegion(pd.register(memory, map(access)), memory);
        } catch (RuntimeException e) {
            memory.release();
            throw e;
        }
    }

    /** The VI protection domain behind {@code domain}, which must be one of this wire's. */
    static ViProtectionDomain pdOf(WireDomain domain) {
        if (domain instanceof VitcpDomain d) {
            return d.pd;
        }
        throw new IllegalArgumentException("not a VI domain: " + domain);
    }

    private static ViAccess[] map(WireAccess... access) {
        List<ViAccess> a = new ArrayList<>();
        for (WireAccess w : access) {
            if (w == WireAccess.REMOTE_READ) {
                a.add(ViAccess.RDMA_READ);
            } else if (w == WireAccess.REMOTE_WRITE) {
                a.add(ViAccess.RDMA_WRITE);
            } // LOCAL_WRITE: VI regions are always locally writable
        }
        return a.toArray(new ViAccess[0]);
    }
}
