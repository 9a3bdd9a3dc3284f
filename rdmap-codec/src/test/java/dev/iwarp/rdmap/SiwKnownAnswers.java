package dev.iwarp.rdmap;

/**
 * Headers of the siw FPDUs of siw_qp_tx.c, for tests at the RDMAP layer (the whole FPDUs, CRC
 * included, are checked octet for octet through MPA in iwarp-bootstrap's {@code SiwVectorsTest}).
 */
final class SiwKnownAnswers {
    /** The Read Request of siw_qp_tx.c: sink STag/TO, 64 octets, source STag/TO. */
    static final ReadRequestHeader READ_REQUEST = new ReadRequestHeader(0x0034cd00, 0x00007f0011223340L, 64,
            0x0012ab00, 0x000055d5c0a0b2a0L);

    private SiwKnownAnswers() {
    }
}
