package dev.iwarp.server.wire;

import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.Sge;
import io.netty.buffer.ByteBuf;

/**
 * A verbs memory region as a {@link WireRegion} of {@link IwarpWire}: its STag is the remote handle, its base TO
 * the address; it hands out the SGEs the wire's connections post.
 */
final class IwarpRegion implements WireRegion {
    final MemoryRegion mr;

    /** The last SGE posted: bench and serve post the same slices again and again. */
    private Sge lastSge;
    /** SGEs posted before, from the first that differed from the last one on (a ring's slots, in turn). */
    private ReuseTable<Sge> sges;

    IwarpRegion(MemoryRegion mr) {
        this.mr = mr;
    }

    /** An SGE of this region; immutable, so one made on another thread may be used again. */
    Sge sge(int offset, int length) {
        Sge s = lastSge;
        if (s == null || s.offset() != offset || s.length() != length) {
            ReuseTable<Sge> t = sges != null || s == null ? sges : (sges = new ReuseTable<>());
            long key = offset / Math.max(1, length) + 31L * length; // a ring's slots: consecutive keys
            s = t == null ? null : t.get(key);
            if (s == null || s.offset() != offset || s.length() != length) {
                s = mr.slice(offset, length);
                if (t != null) {
                    t.put(key, s);
                }
            }
            lastSge = s;
        }
        return s;
    }

    @Override
    public ByteBuf memory() {
        return mr.memory();
    }

    @Override
    public int length() {
        return mr.length();
    }

    @Override
    public long remoteAddress(int offset) {
        return mr.iova() + offset;
    }

    @Override
    public int remoteHandle() {
        return mr.stag();
    }

    @Override
    public String describe() {
        return String.format("STag 0x%08x TO 0x%016x size %d", mr.stag(), remoteAddress(0), mr.length());
    }

    @Override
    public void deregister() {
        mr.deregister();
    }

    @Override
    public void discard() {
        mr.discard();
    }

    @Override
    public boolean isAllocated() {
        return mr.isAllocated();
    }
}
