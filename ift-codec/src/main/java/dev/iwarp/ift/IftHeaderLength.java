package dev.iwarp.ift;

/**
 * The length of a DDP header, from its first octet. IFT needs it twice and stays DDP-agnostic by
 * taking it as a function: to split an outbound ULPDU into header and payload (header_size,
 * payload_size), and to check a received header_size against the header it describes (F5).
 */
@FunctionalInterface
public interface IftHeaderLength {
    /**
     * RFC 5041 §4.2-§4.3 (and the RDMAC-era DDP, which has the same sizes): T bit (0x80 of the first
     * octet) set = tagged header of 14 octets, clear = untagged header of 18 octets.
     */
    IftHeaderLength RFC5041 = firstOctet -> (firstOctet & 0x80) != 0 ? 14 : 18;

    /** The header length (at least 1) for a DDP header whose first octet is {@code firstOctet} (0..255). */
    int headerLength(int firstOctet);
}
