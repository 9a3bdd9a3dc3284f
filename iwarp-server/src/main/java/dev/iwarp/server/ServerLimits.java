package dev.iwarp.server;

/**
 * What one peer may hold of {@code serve}, beyond {@link ServerConfig#maxConnections()}: every value bounds a resource a
 * hostile client could otherwise keep forever (issue 14). Immutable; 0 switches a limit off.
 *
 * @param maxStartups       connections accepted by TCP and still in startup (no MPA Request, IFT adaption or VI/TCP
 *                          ConnectRequest answered yet); more are closed at once
 * @param maxPerSource      connections (in startup or served) from one source IP address; more are closed at once
 * @param messageDeadlineMs once the first octet of an FPDU (or VI/TCP segment, IFT frame) has arrived, the whole of
 *                          it must arrive within this time, else the connection is closed
 * @param maxReadSize       largest RDMA Read served per request (RDMAP over MPA); a larger one gets a Terminate
 */
public record ServerLimits(int maxStartups, int maxPerSource, long messageDeadlineMs, int maxReadSize) {
    /** Default {@code --max-startups}. */
    public static final int DEFAULT_MAX_STARTUPS = 512;
    /** Default {@code --max-per-source}. */
    public static final int DEFAULT_MAX_PER_SOURCE = 256;
    /** Default {@code --message-deadline}. */
    public static final long DEFAULT_MESSAGE_DEADLINE_MS = 10_000;
    /** Default {@code --max-read-size}: the default target region's size. */
    public static final int DEFAULT_MAX_READ_SIZE = 1 << 20;

    public ServerLimits {
        if (maxStartups < 0 || maxPerSource < 0 || messageDeadlineMs < 0 || maxReadSize < 0) {
            throw new IllegalArgumentException("limits must be >= 0");
        }
    }

    /** 512 connections in startup, 256 per source, 10 s per message, 1 MiB per RDMA Read. */
    public static ServerLimits defaults() {
        return new ServerLimits(DEFAULT_MAX_STARTUPS, DEFAULT_MAX_PER_SOURCE, DEFAULT_MESSAGE_DEADLINE_MS,
                DEFAULT_MAX_READ_SIZE);
    }

    /** No limit at all (tests that measure something else). */
    public static ServerLimits none() {
        return new ServerLimits(0, 0, 0, 0);
    }
}
