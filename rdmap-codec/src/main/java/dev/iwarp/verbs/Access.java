package dev.iwarp.verbs;

import java.util.Set;

/** Access rights of a memory region (libibverbs IBV_ACCESS_* names). */
public enum Access {
    /** Local writes into the region: receive buffers, RDMA Read sinks, atomic results. */
    LOCAL_WRITE(1),
    /** The peer may RDMA Read it. */
    REMOTE_READ(2),
    /** The peer may RDMA Write it. */
    REMOTE_WRITE(4),
    /** The peer may apply RFC 7306 atomics to it. */
    REMOTE_ATOMIC(8),
    /**
     * The peer may invalidate the region's STag with a Send with Invalidate (RFC 5040 §5.3), from a
     * stream of the same protection domain only. Opt-in, as on an RNIC: without it such a Send is
     * answered with a Terminate and the region stays valid. Not a placement right: {@link #flag()} is 0.
     */
    REMOTE_INVALIDATE(0);

    private final int flag;

    Access(int flag) {
        this.flag = flag;
    }

    /** The bit of {@link dev.iwarp.ddp.AccessFlags} this right maps to (0 for {@link #REMOTE_INVALIDATE}). */
    public int flag() {
        return flag;
    }

    static int toFlags(Set<Access> rights) {
        int f = 0;
        for (Access a : rights) {
            f |= a.flag;
        }
        return f;
    }
}
