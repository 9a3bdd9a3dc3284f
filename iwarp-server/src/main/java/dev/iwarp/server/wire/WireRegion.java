package dev.iwarp.server.wire;

import io.netty.buffer.ByteBuf;

/**
 * Registered memory on either wire. A peer names octet {@code offset} of it by ({@link #remoteAddress},
 * {@link #remoteHandle}): iWARP (tagged offset, STag) with a zero-based TO unless registered at an IOVA, VI
 * (virtual address, memory handle; draft-dicecco-vitcp-01 §2.2.2.1 "memory handles ... qualify virtual memory
 * addresses").
 */
public interface WireRegion {
    /** The registered buffer (absolute indices 0..length). */
    ByteBuf memory();

    int length();

    /** iWARP: the TO of octet {@code offset}; VI: its virtual address. */
    long remoteAddress(int offset);

    /** iWARP: the STag; VI: the memory handle. */
    int remoteHandle();

    /** For log lines, in the wire's words: "STag 0x.. TO 0x.. size n" or "memory handle 0x.. address 0x.. size n". */
    String describe();

    /**
     * Deregisters; later remote access gets the wire's protection error. Does not release {@link #memory()}, unless
     * the region was registered with {@link WireDomain#registerOnDemand}.
     */
    void deregister();

    /**
     * A region registered on demand gives its memory back (the octets read as zeros again; memory comes back at the
     * next use): call it when no work request in progress uses the octets. Nothing on a wire without on-demand
     * memory, or for a region registered with its memory.
     */
    default void discard() {
    }

    /** Whether the region holds memory now (false only for an on-demand region between uses). */
    default boolean isAllocated() {
        return true;
    }
}
