package dev.iwarp.server.perftest;

import dev.iwarp.server.wire.WireConnection;

/** One data connection (connection B, one per {@code -q}) and what the peer told us about its side. */
final class DataQp {
    final int index;
    final WireConnection conn;
    /** The peer's last dest for this QP: the STag and TO our Writes and Reads go to (send tests: its credit word). */
    PingpongDest remote;
    /** Ours, as sent. */
    PingpongDest local;

    DataQp(int index, WireConnection conn) {
        this.index = index;
        this.conn = conn;
    }

    boolean active() {
        return conn.channel().isActive();
    }

    /** Graceful close (posted work is sent first), as perftest's rdma_disconnect: a FIN, no Terminate. */
    void close(long timeoutMs) {
        conn.closeGracefully(timeoutMs);
    }

    /** The Terminate the peer sent, for error lines ("" if none). */
    String peerError() {
        String e = conn.peerError();
        return e == null ? "" : "; the peer sent " + e;
    }
}
