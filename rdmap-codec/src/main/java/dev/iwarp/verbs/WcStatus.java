package dev.iwarp.verbs;

/** Work completion status (libibverbs ibv_wc_status names, the subset iWARP produces). */
public enum WcStatus {
    SUCCESS,
    /** A received message did not fit the posted receive buffer. */
    LOC_LEN_ERR,
    /** A local SGE named an invalid or deregistered region, or lacked LOCAL_WRITE. */
    LOC_PROT_ERR,
    /** The queue pair left RTS before this request completed (flushed). */
    WR_FLUSH_ERR,
    /** The peer refused a tagged access (invalid STag, bounds, rights, PD): a Terminate said so. */
    REM_ACCESS_ERR,
    /** The peer reported an operation error in a Terminate (unexpected opcode, version, IRD exceeded). */
    REM_OP_ERR,
    /** The peer reported that our message was invalid for its receive queue (no buffer, too long). */
    REM_INV_REQ_ERR,
    /** The connection broke (MPA/TCP error or an unrecoverable local error). */
    FATAL_ERR
}
