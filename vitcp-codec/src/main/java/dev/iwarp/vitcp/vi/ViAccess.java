package dev.iwarp.vitcp.vi;

/** Remote access a memory region grants (VIA memory attributes EnableRdmaWrite / EnableRdmaRead). */
public enum ViAccess {
    /** The peer may RDMA Write the region. */
    RDMA_WRITE,
    /** The peer may RDMA Read the region. */
    RDMA_READ
}
