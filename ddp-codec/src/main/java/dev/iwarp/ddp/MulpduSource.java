package dev.iwarp.ddp;

/**
 * Where DDP learns MULPDU, the largest ULPDU the lower layer (MPA, IFT, ...) takes in one framing unit
 * (RFC 5041 §5.2; RFC 5044 §4.5 for MPA). DDP knows nothing else of the framing.
 */
@FunctionalInterface
public interface MulpduSource {
    /** Current MULPDU in octets; may change between messages (e.g. with the path MSS). */
    int mulpdu();
}
