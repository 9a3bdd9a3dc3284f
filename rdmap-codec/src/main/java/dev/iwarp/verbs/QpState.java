package dev.iwarp.verbs;

/** iWARP queue pair states (RDMAC verbs; RFC 5040 §6). */
public enum QpState {
    /** Created, LLP startup (MPA) not finished: receives may be posted, sends are held. */
    IDLE,
    /** Ready to send: full operation. */
    RTS,
    /** Graceful close in progress. */
    CLOSING,
    /** A Terminate was sent or received; the stream is closing. */
    TERMINATE,
    /** Stream closed or failed; outstanding work completed with errors. */
    ERROR
}
