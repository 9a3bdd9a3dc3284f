package dev.iwarp.verbs;

import dev.iwarp.ddp.TaggedBuffer;
import io.netty.buffer.ByteBuf;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Registered memory (libibverbs ibv_mr): a {@link ByteBuf} region, its STag (24-bit index and 8-bit
 * key, random per registration), its base Tagged Offset ({@link #iova()}), protection domain and
 * access rights. Peers address octet {@code i} of the region as TO {@code iova() + i}.
 */
public final class MemoryRegion {
    private final ProtectionDomain pd;
    private final TaggedBuffer tagged;
    /** Every combination of rights, made once: a region holds one of these rather than sets of its own. */
    private static final List<Set<Access>> ACCESS_SETS = accessSets();
    private final Set<Access> access;

    MemoryRegion(ProtectionDomain pd, TaggedBuffer tagged, Set<Access> access) {
        this.pd = pd;
        this.tagged = tagged;
        int combination = 0;
        for (Access a : access) {
            combination |= 1 << a.ordinal();
        }
        this.access = ACCESS_SETS.get(combination);
    }

    private static List<Set<Access>> accessSets() {
        Access[] all = Access.values();
        List<Set<Access>> sets = new ArrayList<>(1 << all.length);
        for (int combination = 0; combination < 1 << all.length; combination++) {
            EnumSet<Access> s = EnumSet.noneOf(Access.class);
            for (Access a : all) {
                if ((combination & 1 << a.ordinal()) != 0) {
                    s.add(a);
                }
            }
            sets.add(Collections.unmodifiableSet(s));
        }
        return List.copyOf(sets);
    }

    /** The protection domain the region belongs to. */
    public ProtectionDomain pd() {
        return pd;
    }

    /** The STag to advertise to a peer (rkey). iWARP uses one STag for local and remote access. */
    public int stag() {
        return tagged.stag();
    }

    /** Alias of {@link #stag()} with the libibverbs name. */
    public int rkey() {
        return tagged.stag();
    }

    /** Alias of {@link #stag()} with the libibverbs name. */
    public int lkey() {
        return tagged.stag();
    }

    /** Base Tagged Offset: the TO of the region's first octet. */
    public long iova() {
        return tagged.baseTo();
    }

    /** Octets registered. */
    public int length() {
        return tagged.length();
    }

    /** The access rights granted at registration. */
    public Set<Access> access() {
        return access;
    }

    /**
     * The registered memory (a view; writes by the peer appear here). An on-demand region gets its memory here
     * if it has none; after {@link #discard()} a new call gives the new memory.
     */
    public ByteBuf memory() {
        return tagged.memory();
    }

    /** Whether the region gets its memory on demand ({@link ProtectionDomain#registerOnDemand}). */
    public boolean isOnDemand() {
        return tagged.isOnDemand();
    }

    /** Whether the region holds memory now (on demand: between first use and {@link #discard()}). */
    public boolean isAllocated() {
        return tagged.isAllocated();
    }

    /**
     * On demand: gives the memory back; the octets read as zeros again, and memory is allocated at the next use.
     * Only when no work request in progress reads or writes the region (a posted receive may stay posted).
     * Nothing for a region registered with its memory.
     */
    public void discard() {
        tagged.discard();
    }

    /** False after {@link #deregister()} or invalidation (local or by a peer's Send with Invalidate). */
    public boolean isValid() {
        return tagged.isValid();
    }

    /** An SGE over {@code length} octets at {@code offset}. */
    public Sge slice(int offset, int length) {
        return new Sge(this, offset, length);
    }

    /** An SGE over the whole region. */
    public Sge all() {
        return new Sge(this, 0, length());
    }

    /** Invalidates the STag: later remote access fails with Invalid STag (RFC 5040 §5.3). */
    public void invalidate() {
        pd.device().table().invalidate(stag());
    }

    /** Invalidates and forgets the STag and releases the device's reference to the memory. */
    public void deregister() {
        pd.device().deregister(this);
    }

    TaggedBuffer tagged() {
        return tagged;
    }

    @Override
    public String toString() {
        return String.format("MR{STag 0x%08x iova 0x%x len %d %s%s}", stag(), iova(), length(), access,
                isValid() ? "" : " invalid");
    }
}
