package dev.iwarp.mpa;

/**
 * The Ready-To-Receive message types of RFC 6581 peer-to-peer startup (mpa-rev2 §4). The RTR itself
 * is sent and consumed by RDMAP; MPA only negotiates which one.
 */
public enum RtrType {
    /** B bit: a zero-length Send. */
    SEND,
    /** C bit: a zero-length RDMA Write. */
    WRITE,
    /** D bit: a zero-length RDMA Read. */
    READ
}
