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
    REMOTE_ATOMIC(8);

    private final int flag;

    Access(int flag) {
        this.flag = flag;
    }

    /** The bit of {@link dev.iwarp.ddp.AccessFlags} this right maps to. */
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
