package dev.iwarp.server;

/**
 * What one peer may hold of {@code serve}, beyond {@link ServerConfig#maxConnections()}: every value bounds a resource a
 * hostile client could otherwise keep forever. Immutable; 0 switches a limit off.
 *
 * <p>"Source" means the source address's prefix ({@code /sourcePrefixV4} for IPv4, {@code /sourcePrefixV6} for IPv6):
 * one host usually holds a whole IPv4 /24 or IPv6 /64 as easily as one address, so counting per address lets it
 * multiply every per-source limit by the addresses it uses.
 *
 * @param maxStartups          connections accepted by TCP and still in startup (no MPA Request, IFT adaption or
 *                             VI/TCP ConnectRequest answered yet); more are closed at once
 * @param maxPerSource         connections (in startup or served) from one source prefix; more are closed at once
 * @param messageDeadlineMs    once the first octet of an FPDU (or VI/TCP segment, IFT frame) has arrived, the whole
 *                             of it must arrive within this time, else the connection is closed
 * @param maxReadSize          largest RDMA Read served per request (RDMAP over MPA); a larger one gets a Terminate
 * @param sourcePrefixV4       bits of an IPv4 source address that name its source (1..32)
 * @param sourcePrefixV6       bits of an IPv6 source address that name its source (1..128)
 * @param maxStartupsPerSource connections in startup from one source prefix; more are closed at once
 * @param firstOctetTimeoutMs  a connection that sends no octet this long after TCP accepted it is closed
 * @param drainTimeoutSec      a connection whose output stays unwritable (the peer does not read) this long is closed
 * @param allowMarkers         accept an MPA Request with M=1 (we would insert markers in every FPDU we send); by
 *                             default it is refused as siw does (a Reply with R=1), since marking costs us far more
 *                             CPU per Read Response than the request costs the peer
 * @param tlsHandshakesPerSec  TLS handshakes begun per second per source prefix; more connections are closed at once
 */
public record ServerLimits(int maxStartups, int maxPerSource, long messageDeadlineMs, int maxReadSize,
                           int sourcePrefixV4, int sourcePrefixV6, int maxStartupsPerSource, long firstOctetTimeoutMs,
                           long drainTimeoutSec, boolean allowMarkers, int tlsHandshakesPerSec) {
    /** Default {@code --max-startups}. */
    public static final int DEFAULT_MAX_STARTUPS = 512;
    /** Default {@code --max-per-source}. */
    public static final int DEFAULT_MAX_PER_SOURCE = 256;
    /** Default {@code --message-deadline}. */
    public static final long DEFAULT_MESSAGE_DEADLINE_MS = 10_000;
    /** Default {@code --max-read-size}: the default target region's size. */
    public static final int DEFAULT_MAX_READ_SIZE = 1 << 20;
    /** Default {@code --source-prefix-v4}: a /24, what one site or cloud tenant commonly holds. */
    public static final int DEFAULT_SOURCE_PREFIX_V4 = 24;
    /** Default {@code --source-prefix-v6}: a /64, the smallest prefix a host gets (SLAAC). */
    public static final int DEFAULT_SOURCE_PREFIX_V6 = 64;
    /**
     * Default {@code --max-startups-per-source}: 32, a sixteenth of {@link #DEFAULT_MAX_STARTUPS}, so one prefix can
     * never hold the startup slots the rest of the world needs, yet a client opening many connections at once (a
     * bench with 16 connections, an initiator pool) is not refused.
     */
    public static final int DEFAULT_MAX_STARTUPS_PER_SOURCE = 32;
    /**
     * Default {@code --first-octet-timeout}: 2 s. Every client speaks first on every wire (MPA Request, ClientHello,
     * VI/TCP ConnectRequest, IFT adaption) right after the TCP handshake; 2 s is many round trips even across
     * continents, and a socket that says nothing costs a startup slot until then.
     */
    public static final long DEFAULT_FIRST_OCTET_TIMEOUT_MS = 2_000;
    /**
     * Default {@code --drain-timeout}: 30 s. A peer that stops reading keeps everything queued for it (Read Responses,
     * Terminates) in our memory; a reader that is merely slow drains some output within seconds.
     */
    public static final long DEFAULT_DRAIN_TIMEOUT_SEC = 30;
    /**
     * Default {@code --tls-handshake-rate}: 20 per second per source prefix. A handshake costs the server about five
     * times the client's CPU (12.9 ms against 2.4 ms, ECDHE and signing): 20 a second is a quarter of a core at most
     * per prefix, and more than any one client needs to connect.
     */
    public static final int DEFAULT_TLS_HANDSHAKES_PER_SEC = 20;

    public ServerLimits {
        if (maxStartups < 0 || maxPerSource < 0 || messageDeadlineMs < 0 || maxReadSize < 0 || maxStartupsPerSource < 0
                || firstOctetTimeoutMs < 0 || drainTimeoutSec < 0 || tlsHandshakesPerSec < 0) {
            throw new IllegalArgumentException("limits must be >= 0");
        }
        if (sourcePrefixV4 < 1 || sourcePrefixV4 > 32 || sourcePrefixV6 < 1 || sourcePrefixV6 > 128) {
            throw new IllegalArgumentException("source prefixes: 1..32 bits (IPv4), 1..128 bits (IPv6)");
        }
    }

    /**
     * Only these four limits (the others off; sources are still counted per /24 and /64 prefix, and markers are
     * refused).
     */
    public ServerLimits(int maxStartups, int maxPerSource, long messageDeadlineMs, int maxReadSize) {
        this(maxStartups, maxPerSource, messageDeadlineMs, maxReadSize, DEFAULT_SOURCE_PREFIX_V4,
                DEFAULT_SOURCE_PREFIX_V6, 0, 0, 0, false, 0);
    }

    /**
     * 512 connections in startup, 32 of them per source, 256 per source, 10 s per message, 1 MiB per RDMA Read, 2 s to
     * the first octet, 30 s unwritable at most, markers refused, 20 TLS handshakes per second per source.
     */
    public static ServerLimits defaults() {
        return new ServerLimits(DEFAULT_MAX_STARTUPS, DEFAULT_MAX_PER_SOURCE, DEFAULT_MESSAGE_DEADLINE_MS,
                DEFAULT_MAX_READ_SIZE, DEFAULT_SOURCE_PREFIX_V4, DEFAULT_SOURCE_PREFIX_V6,
                DEFAULT_MAX_STARTUPS_PER_SOURCE, DEFAULT_FIRST_OCTET_TIMEOUT_MS, DEFAULT_DRAIN_TIMEOUT_SEC, false,
                DEFAULT_TLS_HANDSHAKES_PER_SEC);
    }

    /** No limit at all (tests that measure something else); markers accepted. */
    public static ServerLimits none() {
        return new ServerLimits(0, 0, 0, 0, DEFAULT_SOURCE_PREFIX_V4, DEFAULT_SOURCE_PREFIX_V6, 0, 0, 0, true, 0);
    }
}
