package dev.iwarp.server.wire;

import dev.iwarp.vitcp.vi.ViMemoryRegion;
import io.netty.buffer.ByteBuf;

/** A VI memory region as a {@link WireRegion}: its memory handle is the remote handle, its address the base. */
final class VitcpRegion implements WireRegion {
    final ViMemoryRegion mr;
    /** The memory this region allocated itself (registerOnDemand), released at deregistration; or null. */
    private final ByteBuf owned;

    VitcpRegion(ViMemoryRegion mr, ByteBuf owned) {
        this.mr = mr;
        this.owned = owned;
    }

    @Override
    public ByteBuf memory() {
        return mr.buffer();
    }

    @Override
    public int length() {
        return mr.length();
    }

    @Override
    public long remoteAddress(int offset) {
        return mr.address() + offset;
    }

    @Override
    public int remoteHandle() {
        return mr.handle();
    }

    @Override
    public String describe() {
        return String.format("memory handle 0x%08x address 0x%016x size %d", mr.handle(), mr.address(),
                mr.length());
    }

    @Override
    public void deregister() {
        mr.deregister();
        if (owned != null && owned.refCnt() > 0) {
            owned.release();
        }
    }
}
