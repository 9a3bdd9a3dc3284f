package dev.iwarp.server;

/**
 * What {@code serve} listens on and negotiates, whatever the framing: each framing's own options live with it
 * (MPA's in {@link ServerMpaOptions}, IFT's and SCTP's in their framings, VI/TCP's in its wire). Immutable.
 *
 * @param address          local address to bind
 * @param port             TCP port (0: ephemeral)
 * @param ird              IRD offered (inbound RDMA Read Requests outstanding at once)
 * @param ord              ORD offered (outbound RDMA Read Requests outstanding at once)
 * @param maxConnections   connections served at once; more are refused (MPA: Reply R=1)
 * @param startupTimeoutMs connection setup timeout: MPA startup, IFT adaption, VI/TCP's passive Incoming timeout
 * @param idleTimeoutSec   close sessions that complete no message (ULPDU, VI/TCP segment) this long (0: never)
 * @param targetSize       octets of the target region (each connection's own, or the shared one) advertised in the
 *                         MPA Reply Private Data or the VI/TCP ConnectAccept's Calling Discriminator (0: none)
 * @param echoOnly         echo every Send, 16-octet ones too, instead of reading those as rping advertisements (for
 *                         Send/Recv tools such as librdmacm's rdma_client)
 * @param sharedTarget     one target region and one protection domain for every connection (any client may read and
 *                         overwrite what another wrote); by default each connection has its own PD and target
 * @param limits           the bounds on what a peer may hold ({@link ServerLimits})
 */
public record ServerConfig(String address, int port, int ird, int ord, int maxConnections, long startupTimeoutMs,
                           long idleTimeoutSec, int targetSize, boolean echoOnly, boolean sharedTarget,
                           ServerLimits limits) {
    public static final int DEFAULT_PORT = 7174;
    /** {@code serve --wire vitcp}'s default port: VI/TCP has no assigned port (draft-dicecco-vitcp-01 §2.2.2.2.1). */
    public static final int DEFAULT_VITCP_PORT = 7175;
    /** {@code serve --wire ift}'s default port: IFT has no assigned port either (the ULP's dedicated port, draft-williams-iwarp-ift-01 §4). */
    public static final int DEFAULT_IFT_PORT = 7176;

    /**
     * Default {@code --max-connections}: 10,000 idle connections (the scale goal) with room to spare. An idle session over
     * iWARP holds no buffer memory (regions on demand): 10-14 KiB of RSS in all at 10,000.
     */
    public static final int DEFAULT_MAX_CONNECTIONS = 16_384;

    /** Default {@code --idle-timeout}: a session that completes no message for a minute is closed. */
    public static final long DEFAULT_IDLE_TIMEOUT_SEC = 60;

    /**
     * The defaults of {@code serve}: 0.0.0.0:7174, IRD/ORD 16, 1 MiB target per connection, 16,384 connections,
     * 10 s startup, 60 s idle, {@link ServerLimits#defaults()}.
     */
    public static ServerConfig defaults() {
        return new ServerConfig("0.0.0.0", DEFAULT_PORT, 16, 16, DEFAULT_MAX_CONNECTIONS, 10_000,
                DEFAULT_IDLE_TIMEOUT_SEC, 1 << 20, false, false, ServerLimits.defaults());
    }

    public ServerConfig withAddress(String address, int port) {
        return new ServerConfig(address, port, ird, ord, maxConnections, startupTimeoutMs, idleTimeoutSec, targetSize,
                echoOnly, sharedTarget, limits);
    }

    public ServerConfig withLimits(int maxConnections, long startupTimeoutMs, long idleTimeoutSec) {
        return new ServerConfig(address, port, ird, ord, maxConnections, startupTimeoutMs, idleTimeoutSec, targetSize,
                echoOnly, sharedTarget, limits);
    }

    public ServerConfig withTargetSize(int targetSize) {
        return new ServerConfig(address, port, ird, ord, maxConnections, startupTimeoutMs, idleTimeoutSec, targetSize,
                echoOnly, sharedTarget, limits);
    }

    public ServerConfig withEchoOnly(boolean echoOnly) {
        return new ServerConfig(address, port, ird, ord, maxConnections, startupTimeoutMs, idleTimeoutSec, targetSize,
                echoOnly, sharedTarget, limits);
    }

    public ServerConfig withSharedTarget(boolean sharedTarget) {
        return new ServerConfig(address, port, ird, ord, maxConnections, startupTimeoutMs, idleTimeoutSec, targetSize,
                echoOnly, sharedTarget, limits);
    }

    public ServerConfig withLimits(ServerLimits limits) {
        return new ServerConfig(address, port, ird, ord, maxConnections, startupTimeoutMs, idleTimeoutSec, targetSize,
                echoOnly, sharedTarget, limits);
    }
}
