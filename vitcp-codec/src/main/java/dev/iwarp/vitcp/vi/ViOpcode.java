package dev.iwarp.vitcp.vi;

/** What a completion completes. */
public enum ViOpcode {
    SEND,
    RDMA_WRITE,
    RDMA_READ,
    /** A receive descriptor consumed by a Send. */
    RECV,
    /** A receive descriptor consumed by an RDMA Write with immediate data. */
    RECV_RDMA_WRITE_WITH_IMMEDIATE
}
