package dev.iwarp.server;

import java.util.Locale;

/**
 * Why {@code serve} refused a connection at once or closed it because a limit ran out, named as the option that
 * sets the limit: the {@code cause} label of {@code iwarp.connections.refused}. The first five refuse a
 * connection before it is served; the others end one that held a resource too long or asked for too much.
 */
enum RefusalCause {
    /** An MPA Reply with R=1 (VI/TCP ConnectReject): every session slot is taken. */
    MAX_CONNECTIONS,
    /** Closed at accept: too many connections in startup. */
    MAX_STARTUPS,
    /** Closed at accept: too many connections from the source's prefix. */
    MAX_PER_SOURCE,
    /** Closed at accept: too many connections from the source's prefix in startup. */
    MAX_STARTUPS_PER_SOURCE,
    /** Closed at accept: too many TLS handshakes from the source's prefix in the current second. */
    TLS_HANDSHAKE_RATE,
    /** Closed: nothing arrived after the TCP handshake. */
    FIRST_OCTET_TIMEOUT,
    /** Closed still in startup (no MPA Request, IFT adaption or VI/TCP ConnectRequest answered) at the timeout. */
    STARTUP_TIMEOUT,
    /** Closed: a message begun was not complete in time. */
    MESSAGE_DEADLINE,
    /** Closed: the session moved no data for the idle timeout. */
    IDLE_TIMEOUT,
    /** Closed: the peer read nothing of what we sent for the drain timeout. */
    DRAIN_TIMEOUT,
    /** Ended with a Terminate: the memory budget refused what the peer's message needed. */
    MEMORY_BUDGET;

    private final String option = name().toLowerCase(Locale.ROOT).replace('_', '-');

    /** The option's name without its dashes, e.g. {@code max-startups}: the label value. */
    String option() {
        return option;
    }
}
