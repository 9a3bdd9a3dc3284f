package dev.iwarp.server.perftest;

import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The data phase of each test on connection(s) B, both roles. One thread posts and reaps; every wait ends after the
 * timeout with a line that says what did not come.
 */
final class Traffic {
    private static final long WR_DATA = 1;
    private static final long WR_CREDIT = 2;
    private static final long WR_RECV = 3;

    private final PerftestSettings s;
    private final List<DataQp> qps;
    private final Events events;
    private final Buffers buf;
    private final int cycle;
    private final int cacheLine;
    private final String role;
    /** send_bw, per QP and over all sizes: Sends posted (sender) and receives completed (receiver). */
    private final long[] sentTotal;
    private final long[] receivedTotal;
    private final long[] recvPosted;
    private long creditWrites;
    private int creditWritesOutstanding;

    Traffic(PerftestSettings s, List<DataQp> qps, Events events, Buffers buf, int cycle, int cacheLine) {
        this.s = s;
        this.qps = qps;
        this.events = events;
        this.buf = buf;
        this.cycle = cycle;
        this.cacheLine = cacheLine;
        this.role = s.client() ? "client" : "server";
        sentTotal = new long[qps.size()];
        receivedTotal = new long[qps.size()];
        recvPosted = new long[qps.size()];
    }

    /** perftest's remote-address walk: the step between messages, 0 when the address stays put. */
    int walkStep(int size) {
        return size <= cycle / 2 ? Math.max(roundUp(size, cacheLine), cacheLine) : 0;
    }

    private int advance(int offset, int step) {
        return step == 0 || offset + step >= cycle ? 0 : offset + step;
    }

    private static int roundUp(int v, int to) {
        return (v + to - 1) / to * to;
    }

    /** write_bw / read_bw client: RDMA Writes or Reads to the peer's dest, up to the tx depth (Reads: ORD) outstanding. */
    Results.Bandwidth requester(int size) throws PerftestException {
        boolean read = s.test().op() == PerftestTest.Op.READ;
        boolean timed = s.durationSec() > 0;
        long iters = s.iterations();
        int n = qps.size();
        int[] depth = new int[n];
        long[] posted = new long[n];
        long[] done = new long[n];
        int[] remoteOff = new int[n];
        int step = walkStep(size);
        for (int q = 0; q < n; q++) {
            depth[q] = Math.max(1, timed ? s.txDepth() : (int) Math.min(s.txDepth(), iters));
            if (read) {
                depth[q] = Math.max(1, Math.min(depth[q], qps.get(q).conn.readDepth()));
            }
        }
        Peak peak = new Peak(depth[0] * n);
        long start = System.nanoTime();
        long end = start + s.durationSec() * 1_000_000_000L;
        long last = start;
        while (true) {
            boolean posting = !timed || System.nanoTime() - end < 0;
            boolean all = true;
            for (int q = 0; q < n; q++) {
                DataQp d = qps.get(q);
                while (posted[q] - done[q] < depth[q] && posting && (timed || posted[q] < iters)) {
                    long to = d.remote.vaddr() + remoteOff[q];
                    if (read) {
                        d.conn.postRdmaRead(WR_DATA, buf.dataRegion, buf.half + remoteOff[q], size, to, d.remote.rkey());
                    } else {
                        d.conn.postRdmaWrite(WR_DATA, buf.dataRegion, buf.half + remoteOff[q], size, to, d.remote.rkey());
                    }
                    remoteOff[q] = advance(remoteOff[q], step);
                    posted[q]++;
                }
                all &= posted[q] == done[q] && (timed ? !posting : posted[q] == iters);
            }
            if (all) {
                break;
            }
            Events.Event e = next(read ? "an RDMA Read" : "an RDMA Write", s.timeoutMs());
            done[e.qp()]++;
            last = System.nanoTime();
            peak.completed(last);
        }
        long total = 0;
        for (long d : done) {
            total += d;
        }
        return Results.Bandwidth.of(size, timed ? total / n : iters, total, (last - start) / 1e9, peak.rate(),
                s.reportGbits());
    }

    /** send_bw sender: Sends, paced by the credit word the receiver RDMA-Writes its receive count to. */
    Results.Bandwidth sender(int size) throws PerftestException {
        long iters = s.iterations();
        int n = qps.size();
        int depth = (int) Math.max(1, Math.min(s.txDepth(), iters));
        long[] posted = new long[n];
        long[] done = new long[n];
        Peak peak = new Peak(depth * n);
        long start = System.nanoTime();
        long last = start;
        long progress = start;
        while (true) {
            boolean all = true;
            for (int q = 0; q < n; q++) {
                DataQp d = qps.get(q);
                // the receiver has this many receives posted: never run past them (iWARP has no RNR retry)
                while (posted[q] < iters && posted[q] - done[q] < depth
                        && sentTotal[q] + 1 - buf.creditWord(q) < s.rxDepth()) {
                    d.conn.postSend(WR_DATA, buf.dataRegion, buf.half, size);
                    posted[q]++;
                    sentTotal[q]++;
                    progress = System.nanoTime();
                }
                all &= done[q] == iters;
            }
            if (all) {
                break;
            }
            Events.Event e = events.poll(1);
            long now = System.nanoTime();
            if (e == null) {
                checkAlive("a Send completion or a credit update");
                if (now - progress > s.timeoutMs() * 1_000_000L) {
                    throw new PerftestException("no credit update from the peer within " + s.timeoutMs() + " ms after "
                            + posted[0] + " Sends: does its -r/-n match ours?");
                }
                continue;
            }
            check(e, "a Send");
            done[e.qp()]++;
            last = now;
            progress = now;
            peak.completed(now);
        }
        long total = n * iters;
        return Results.Bandwidth.of(size, iters, total, (last - start) / 1e9, peak.rate(), s.reportGbits());
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

    private void postRecv(int q, int size) {
        qps.get(q).conn.postRecv(WR_RECV, buf.dataRegion, 0, Math.max(size, 1));
        recvPosted[q]++;
    }

    /** send_bw receiver: counts Sends, reposts, RDMA-Writes the running count to the sender's credit word. */
    Results.Bandwidth receiver(int size) throws PerftestException {
        long iters = s.iterations();
        int n = qps.size();
        long[] got = new long[n];
        int every = Math.max(1, s.rxDepth() / 3);
        Peak peak = new Peak(Math.min(s.rxDepth(), (int) iters) * n);
        long start = 0;
        long last = 0;
        long remaining = n * iters;
        while (remaining > 0) {
            Events.Event e = next("a Send (" + (n * iters - remaining) + " of " + n * iters + " arrived)", s.timeoutMs());
            if (!e.receive()) {
                creditWritesOutstanding--;
                continue;
            }
            int q = e.qp();
            long now = System.nanoTime();
            start = start == 0 ? now : start;
            last = now;
            peak.completed(now);
            got[q]++;
            receivedTotal[q]++;
            remaining--;
            if (recvPosted[q] < iters) {
                postRecv(q, size);
            }
            if ((receivedTotal[q] % s.rxDepth()) % every == 0) {
                writeCredit(q, (int) receivedTotal[q]);
            }
        }
        drainCredits();
        return Results.Bandwidth.of(size, iters, n * iters, (last - start) / 1e9, peak.rate(), s.reportGbits());
    }

    private void writeCredit(int q, int count) throws PerftestException {
        while (creditWritesOutstanding >= Buffers.CREDIT_SLOTS) {
            Events.Event e = next("a credit Write", s.timeoutMs());
            if (!e.receive()) {
                creditWritesOutstanding--;
            }
        }
        DataQp d = qps.get(q);
        int slot = buf.creditSlot(creditWrites++, count);
        d.conn.postRdmaWrite(WR_CREDIT, buf.creditRegion, slot, 4, d.remote.vaddr(), d.remote.rkey());
        creditWritesOutstanding++;
    }

    private void drainCredits() throws PerftestException {
        while (creditWritesOutstanding > 0) {
            Events.Event e = next("a credit Write", s.timeoutMs());
            if (!e.receive()) {
                creditWritesOutstanding--;
            }
        }
    }

    /**
     * write_lat: the server writes first, then each side answers the peer's Write with its own. Every payload is
     * zero but its last octet, the iteration number mod 256, which the receiver polls in its own memory.
     */
    LatencySamples writeLatency(int size) throws PerftestException {
        DataQp d = qps.get(0);
        long iters = s.iterations();
        LatencySamples out = new LatencySamples(iters);
        buf.data.setZero(buf.half, size);
        long lastPost = 0;
        for (long i = 1; i <= iters; i++) {
            if (s.client()) {
                awaitOctet(size - 1, (byte) i, i);
                long now = System.nanoTime();
                if (i > 1) {
                    out.add(now - lastPost);
                }
                lastPost = now;
                writeOnce(d, size, (byte) i);
            } else {
                long t0 = System.nanoTime();
                writeOnce(d, size, (byte) i);
                awaitOctet(size - 1, (byte) i, i);
                out.add(System.nanoTime() - t0);
            }
        }
        return out;
    }

    private void writeOnce(DataQp d, int size, byte counter) throws PerftestException {
        buf.data.setByte(buf.half + size - 1, counter);
        d.conn.postRdmaWrite(WR_DATA, buf.dataRegion, buf.half, size, d.remote.vaddr(), d.remote.rkey());
        Events.Event e = next("our RDMA Write", s.timeoutMs());
        if (e.receive()) {
            throw new PerftestException("an unexpected Send arrived during " + s.test().command());
        }
    }

    private void awaitOctet(int offset, byte value, long iteration) throws PerftestException {
        long deadline = System.nanoTime() + s.timeoutMs() * 1_000_000L;
        int spins = 0;
        while (buf.advertisedOctet(offset) != value) {
            if (++spins < 2000) {
                Thread.onSpinWait();
                continue;
            }
            spins = 0;
            LockSupport.parkNanos(20_000);
            Events.Event e = events.pollNow();
            if (e != null) {
                check(e, "the peer's RDMA Write");
            }
            checkAlive("the peer's RDMA Write " + iteration);
            if (System.nanoTime() - deadline > 0) {
                throw new PerftestException("the peer's RDMA Write " + iteration + " of " + s.iterations()
                        + " did not arrive within " + s.timeoutMs() + " ms: do our -s/-n match?");
            }
        }
    }

    /** read_lat client: one RDMA Read at a time, each timed. */
    LatencySamples readLatency(int size) throws PerftestException {
        DataQp d = qps.get(0);
        boolean timed = s.durationSec() > 0;
        long end = System.nanoTime() + s.durationSec() * 1_000_000_000L;
        LatencySamples out = new LatencySamples(timed ? 1 << 16 : s.iterations());
        for (long i = 0; timed ? System.nanoTime() - end < 0 : i < s.iterations(); i++) {
            long t0 = System.nanoTime();
            d.conn.postRdmaRead(WR_DATA, buf.dataRegion, buf.half, size, d.remote.vaddr(), d.remote.rkey());
            next("an RDMA Read Response", s.timeoutMs());
            out.add(System.nanoTime() - t0);
        }
        return out;
    }

    /** send_lat: the client Sends first, the server answers each Send with one of the same size. */
    LatencySamples sendLatency(int size) throws PerftestException {
        long iters = s.iterations();
        LatencySamples out = new LatencySamples(iters);
        long lastSend = 0;
        for (long i = 0; i < iters; i++) {
            if (s.client()) {
                long t0 = System.nanoTime();
                sendOnce(size);
                awaitReceive(size, i);
                out.add(System.nanoTime() - t0);
            } else {
                awaitReceive(size, i);
                long now = System.nanoTime();
                if (i > 0) {
                    out.add(now - lastSend);
                }
                lastSend = now;
                sendOnce(size);
            }
        }
        drainSends();
        return out;
    }

    private int sendsOutstanding;

    private void sendOnce(int size) {
        qps.get(0).conn.postSend(WR_DATA, buf.dataRegion, buf.half, size);
        sendsOutstanding++;
    }

    private void awaitReceive(int size, long i) throws PerftestException {
        while (true) {
            Events.Event e = next("the peer's Send " + (i + 1) + " of " + s.iterations(), s.timeoutMs());
            if (!e.receive()) {
                sendsOutstanding--;
                continue;
            }
            if (recvPosted[0] < s.iterations()) {
                postRecv(0, size);
            }
            return;
        }
    }

    private void drainSends() throws PerftestException {
        while (sendsOutstanding > 0) {
            Events.Event e = next("our Send", s.timeoutMs());
            if (!e.receive()) {
                sendsOutstanding--;
            }
        }
    }

    private Events.Event next(String what, long timeoutMs) throws PerftestException {
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

    private void check(Events.Event e, String what) throws PerftestException {
        if (!e.success()) {
            throw new PerftestException("Completion with error at " + role + ": " + what + " ended " + e.status()
                    + qps.get(e.qp()).peerError());
        }
    }

    private void checkAlive(String what) throws PerftestException {
        for (DataQp d : qps) {
            if (!d.active()) {
                throw new PerftestException("the peer closed data connection " + d.index + " while we waited for "
                        + what + d.peerError());
            }
        }
    }

    /** The best rate over any {@code window} consecutive completions (messages per second). */
    static final class Peak {
        private final long[] ring;
        private long count;
        private double best;

        Peak(int window) {
            ring = new long[Math.max(1, window)];
        }

        void completed(long nanos) {
            int at = (int) (count % ring.length);
            if (count >= ring.length && nanos > ring[at]) {
                best = Math.max(best, ring.length * 1e9 / (nanos - ring[at]));
            }
            ring[at] = nanos;
            count++;
        }

        double rate() {
            return best;
        }
    }

    /** Latency samples in nanoseconds. */
    static final class LatencySamples {
        long[] ns;
        int count;

        LatencySamples(long capacity) {
            ns = new long[(int) Math.max(1, Math.min(capacity, 1 << 24))];
        }

        void add(long v) {
            if (count == ns.length) {
                ns = java.util.Arrays.copyOf(ns, Math.min(ns.length * 2, 1 << 26));
                if (count == ns.length) {
                    return;
                }
            }
            ns[count++] = v;
        }
    }
}
