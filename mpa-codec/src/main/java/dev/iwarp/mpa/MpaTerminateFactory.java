package dev.iwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Builds the ULPDU of an RDMAP Terminate (Layer 2 LLP, EType 0 MPA, the given code) for the RFC 6581
 * negotiation failures an Initiator must report on the wire (codes 6 and 7, mpa-rev2 §3-§4). MPA
 * does not know the RDMAP format, so the RDMAP layer supplies this; MPA frames and sends the ULPDU
 * as the connection's first FPDU and then closes.
 */
@FunctionalInterface
public interface MpaTerminateFactory {
    /** Returns a new ULPDU buffer; the caller takes ownership and releases it. */
    ByteBuf terminateUlpdu(ByteBufAllocator alloc, MpaErrorCode code);
}
