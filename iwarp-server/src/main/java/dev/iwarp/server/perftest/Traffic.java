package dev.iwarp.server.perftest;

import java.util.List;

/**
 * What the data phase of each test on connection(s) B shares, both roles: the data QPs and buffers, their
 * receives, and waiting for completions. One thread posts and reaps; every wait ends after the timeout with a
 * line that says what did not come. The tests themselves are {@link BandwidthTraffic} and {@link LatencyTraffic}.
 */
final class Traffic {
    static final long WR_DATA = 1;
    static final long WR_CREDIT = 2;
    static final long WR_RECV = 3;

    final PerftestSettings s;
    final List<DataQp> qps;
    final Events events;
    final Buffers buf;
    private final String role;
    /** Receives posted per QP for the current size. */
    private final long[] recvPosted;

    Traffic(PerftestSettings s, List<DataQp> qps, Events events, Buffers buf) {
        this.s = s;
        this.qps = qps;
        this.events = events;
        this.buf = buf;
        this.role = s.client() ? "client" : "server";
        recvPosted = new long[qps.size()];
    }

    /** Posts up to rx depth receives of {@code size} per QP (send tests; before the last dest exchange). */
    void prepareReceives(int size) {
        for (int q = 0; q < qps.size(); q++) {
            recvPosted[q] = 0;
            long k = Math.min(s.rxDepth(), s.iterations());
            for (long i = 0; i < k; i++) {
                postRecv(q, size);
            }
        }
    }

    /** Reposts a receive of {@code size} on QP {@code q} unless all the iterations have one already. */
    void repostRecv(int q, int size) {
        if (recvPosted[q] < s.iterations()) {
            postRecv(q, size);
        }
    }

    private void postRecv(int q, int size) {
        qps.get(q).conn.postRecv(WR_RECV, buf.dataRegion, 0, Math.max(size, 1));
        recvPosted[q]++;
    }

    /** The next completion, checked; a timeout or a closed peer says it was waiting for {@code what}. */
    Events.Event next(String what, long timeoutMs) throws PerftestException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (true) {
            Events.Event e = events.poll(100);
            if (e != null) {
                check(e, what);
                return e;
            }
            checkAlive(what);
            if (System.nanoTime() - deadline > 0) {
                throw new PerftestException("no completion of " + what + " within " + timeoutMs
                        + " ms: do the peer's -s, -n and -r match ours?");
            }
        }
    }

    /** Fails on a completion with error, as perftest's "Completion with error" line. */
    void check(Events.Event e, String what) throws PerftestException {
        if (!e.success()) {
            throw new PerftestException("Completion with error at " + role + ": " + what + " ended " + e.status()
                    + qps.get(e.qp()).peerError());
        }
    }

    /** Fails once the peer closed any data connection. */
    void checkAlive(String what) throws PerftestException {
        for (DataQp d : qps) {
            if (!d.active()) {
                throw new PerftestException("the peer closed data connection " + d.index + " while we waited for "
                        + what + d.peerError());
            }
        }
    }
}
