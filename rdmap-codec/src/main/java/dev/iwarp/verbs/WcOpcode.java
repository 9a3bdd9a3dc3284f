package dev.iwarp.verbs;

/** What a work completion completed. */
public enum WcOpcode {
    SEND,
    RDMA_WRITE,
    RDMA_READ,
    IMMEDIATE_DATA,
    ATOMIC_FETCH_ADD,
    ATOMIC_COMPARE_SWAP,
    ATOMIC_SWAP,
    /** A receive buffer was filled by a Send. */
    RECV,
    /** A receive buffer was consumed by RFC 7306 Immediate Data. */
    RECV_IMMEDIATE
}
