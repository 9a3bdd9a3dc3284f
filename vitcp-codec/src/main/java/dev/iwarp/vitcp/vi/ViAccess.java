package dev.iwarp.vitcp.vi;

/** Remote access a memory region grants (VIA memory attributes EnableRdmaWrite / EnableRdmaRead). */
public enum ViAccess {
    RDMA_WRITE,
    RDMA_READ
}
