package dev.iwarp.server.perftest;

import static dev.iwarp.server.perftest.Traffic.WR_DATA;

import java.util.concurrent.locks.LockSupport;

/**
 * The latency tests' data phase: write_lat (each side answers the peer's RDMA Write with its own, polling its
 * memory for it), read_lat (one RDMA Read at a time) and send_lat (Send ping-pong), one QP, each sample timed.
 */
final class LatencyTraffic {
    private final Traffic t;
    private final PerftestSettings s;
    private final Events events;
    private final Buffers buf;
    private int sendsOutstanding;

    LatencyTraffic(Traffic t) {
        this.t = t;
        this.s = t.s;
        this.events = t.events;
        this.buf = t.buf;
    }

    /**
     * write_lat: the server writes first, then each side answers the peer's Write with its own. Every payload is
     * zero but its last octet, the iteration number mod 256, which the receiver polls in its own memory.
     */
    LatencySamples writeLatency(int size) throws PerftestException {
        DataQp d = t.qps.get(0);
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
        Events.Event e = t.next("our RDMA Write", s.timeoutMs());
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
                t.check(e, "the peer's RDMA Write");
            }
            t.checkAlive("the peer's RDMA Write " + iteration);
            if (System.nanoTime() - deadline > 0) {
                throw new PerftestException("the peer's RDMA Write " + iteration + " of " + s.iterations()
                        + " did not arrive within " + s.timeoutMs() + " ms: do our -s/-n match?");
            }
        }
    }

    /** read_lat client: one RDMA Read at a time, each timed. */
    LatencySamples readLatency(int size) throws PerftestException {
        DataQp d = t.qps.get(0);
        boolean timed = s.durationSec() > 0;
        long end = System.nanoTime() + s.durationSec() * 1_000_000_000L;
        LatencySamples out = new LatencySamples(timed ? 1 << 16 : s.iterations());
        for (long i = 0; timed ? System.nanoTime() - end < 0 : i < s.iterations(); i++) {
            long t0 = System.nanoTime();
            d.conn.postRdmaRead(WR_DATA, buf.dataRegion, buf.half, size, d.remote.vaddr(), d.remote.rkey());
            t.next("an RDMA Read Response", s.timeoutMs());
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

    private void sendOnce(int size) {
        t.qps.get(0).conn.postSend(WR_DATA, buf.dataRegion, buf.half, size);
        sendsOutstanding++;
    }

    private void awaitReceive(int size, long i) throws PerftestException {
        while (true) {
            Events.Event e = t.next("the peer's Send " + (i + 1) + " of " + s.iterations(), s.timeoutMs());
            if (!e.receive()) {
                sendsOutstanding--;
                continue;
            }
            t.repostRecv(0, size);
            return;
        }
    }

    private void drainSends() throws PerftestException {
        while (sendsOutstanding > 0) {
            Events.Event e = t.next("our Send", s.timeoutMs());
            if (!e.receive()) {
                sendsOutstanding--;
            }
        }
    }
}
