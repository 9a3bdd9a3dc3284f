package dev.iwarp.server.wire;

import io.netty.channel.Channel;

/**
 * One RDMA connection on either wire, the shape the verbs {@code QueuePair} and the VI {@code ViEndpoint} share:
 * post a receive, post a Send / RDMA Read / RDMA Write with a remote (address, handle), completions to the
 * {@link WireCompletionListener} given when connecting or accepting. Posting is thread-safe; work runs on the
 * connection's event loop. Buffers of a posted request must not change until it completes.
 *
 * <p>Where VI semantics differ: remote memory is (virtual address, memory handle) rather than (TO, STag); a VI's
 * reliability level decides when a send completes (Reliable Reception: on the peer's Message ACK, i.e. placed at
 * the peer; otherwise once handed to TCP, like iWARP); RDMA Read is refused on Unreliable VIs.
 */
public interface WireConnection {
    void postRecv(long wrId, WireRegion local, int offset, int length);

    void postSend(long wrId, WireRegion local, int offset, int length);

    /** Reads {@code length} octets at the peer's ({@code remoteAddress}, {@code remoteHandle}) into local memory. */
    void postRdmaRead(long wrId, WireRegion local, int offset, int length, long remoteAddress, int remoteHandle);

    /** Writes {@code length} local octets to the peer's ({@code remoteAddress}, {@code remoteHandle}). */
    void postRdmaWrite(long wrId, WireRegion local, int offset, int length, long remoteAddress, int remoteHandle);

    /**
     * Whether a request posted unsignaled ({@code signaled} false below) completes without a completion when it
     * succeeds, as verbs' selective signaling has it: a later signaled request's completion then says it completed
     * (a send queue completes in posting order). A wire that cannot reports every completion, and says false.
     */
    default boolean signalsSelectively() {
        return false;
    }

    /** {@link #postSend}, unsignaled when {@code signaled} is false ({@link #signalsSelectively}). */
    default void postSend(long wrId, WireRegion local, int offset, int length, boolean signaled) {
        postSend(wrId, local, offset, length);
    }

    /** {@link #postRdmaRead}, unsignaled when {@code signaled} is false ({@link #signalsSelectively}). */
    default void postRdmaRead(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                              int remoteHandle, boolean signaled) {
        postRdmaRead(wrId, local, offset, length, remoteAddress, remoteHandle);
    }

    /** {@link #postRdmaWrite}, unsignaled when {@code signaled} is false ({@link #signalsSelectively}). */
    default void postRdmaWrite(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                               int remoteHandle, boolean signaled) {
        postRdmaWrite(wrId, local, offset, length, remoteAddress, remoteHandle);
    }

    /** The TCP connection (close it to disconnect; its close future ends the connection's life). */
    Channel channel();

    /**
     * Closes without an error (a FIN, no Terminate), waiting up to {@code timeoutMs} per step: work already posted is
     * sent first where the wire can tell (a queue pair's graceful close), then the channel closes.
     */
    default void closeGracefully(long timeoutMs) {
        channel().close().awaitUninterruptibly(timeoutMs);
    }

    /** Runs {@code action} (on the event loop) once the connection is in full operation. */
    void whenEstablished(Runnable action);

    /** The negotiated parameters, once established: "MPA Rev 2, CRC off, IRD 1 ORD 1, MULPDU 32762" or similar. */
    String parameters();

    /** One short phrase for report headers: "MPA Rev 2 CRC on", "VI/TCP Reliable Delivery CRC off". */
    String summary();

    /** Whether the negotiated framing carries a CRC (MPA CRC32C; VI/TCP trailer CRC). */
    boolean crc();

    /** RDMA Reads this end may have outstanding: MPA ORD; VI the agreed RDMA Read Window (both directions). */
    int readDepth();

    /**
     * What the peer passed with connection setup: MPA Private Data of the Request/Reply; VI/TCP the peer's
     * Calling Discriminator of its CE segment (a ConnectAccept's, for an active end).
     */
    byte[] peerData();

    /**
     * The error the peer reported before the connection ended, for a user to read (over iWARP its Terminate,
     * RFC 5040 §5.4, decoded), or null if it reported none (a plain close, or still connected).
     */
    default String peerError() {
        return null;
    }

    /**
     * Why the connection ended, for a user to read beside a work request that completed in error (flushed), or null if
     * not known (or still connected): over iWARP the Terminate the peer sent; over VI/TCP what broke the VI (a
     * protocol violation, a CRC error, an error the peer reported, a TCP error or close).
     */
    default String endCause() {
        String e = peerError();
        return e == null ? null : "the peer sent " + e;
    }

    /**
     * What the peer did to us, for a session's closing line ("3 Writes (3072 octets placed), 0 Reads answered
     * (0 octets), 2 Sends (32 octets)"), or null where the wire does not count it. On the event loop or after close.
     */
    default String peerActivity() {
        return null;
    }

    /**
     * Payload octets the peer moved through the RDMA core so far (placed by its Writes, sent back for its Reads,
     * received in its Sends): a count that only grows, so that a connection guard can tell a busy connection from an
     * idle one when the core takes ULPDUs straight from the framing and none passes the pipeline. -1 where the wire
     * does not count it. On the event loop.
     */
    default long peerOctetsMoved() {
        return -1;
    }
}
