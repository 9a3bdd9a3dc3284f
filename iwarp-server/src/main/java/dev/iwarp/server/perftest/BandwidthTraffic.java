package dev.iwarp.server.perftest;

import static dev.iwarp.server.perftest.Traffic.WR_CREDIT;
import static dev.iwarp.server.perftest.Traffic.WR_DATA;

import java.util.List;

/**
 * The bandwidth tests' data phase: write_bw and read_bw (the client's RDMA Writes or Reads walking the peer's
 * buffer, as perftest's remote-address walk) and send_bw (Sends paced by the receiver's credit Writes).
 */
final class BandwidthTraffic {
    private final Traffic t;
    private final PerftestSettings s;
    private final List<DataQp> qps;
    private final Events events;
    private final Buffers buf;
    private final int cycle;
    private final int cacheLine;
    /** send_bw, per QP and over all sizes: Sends posted (sender) and receives completed (receiver). */
    private final long[] sentTotal;
    private final long[] receivedTotal;
    private long creditWrites;
    private int creditWritesOutstanding;

    BandwidthTraffic(Traffic t, int cycle, int cacheLine) {
        this.t = t;
        this.s = t.s;
        this.qps = t.qps;
        this.events = t.events;
        this.buf = t.buf;
        this.cycle = cycle;
        this.cacheLine = cacheLine;
        sentTotal = new long[qps.size()];
        receivedTotal = new long[qps.size()];
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
            Events.Event e = t.next(read ? "an RDMA Read" : "an RDMA Write", s.timeoutMs());
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
                t.checkAlive("a Send completion or a credit update");
                if (now - progress > s.timeoutMs() * 1_000_000L) {
                    throw new PerftestException("no credit update from the peer within " + s.timeoutMs() + " ms after "
                            + posted[0] + " Sends: does its -r/-n match ours?");
                }
                continue;
            }
            t.check(e, "a Send");
            done[e.qp()]++;
            last = now;
            progress = now;
            peak.completed(now);
        }
        long total = n * iters;
        return Results.Bandwidth.of(size, iters, total, (last - start) / 1e9, peak.rate(), s.reportGbits());
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
            Events.Event e = t.next("a Send (" + (n * iters - remaining) + " of " + n * iters + " arrived)",
                    s.timeoutMs());
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
            t.repostRecv(q, size);
            if ((receivedTotal[q] % s.rxDepth()) % every == 0) {
                writeCredit(q, (int) receivedTotal[q]);
            }
        }
        drainCredits();
        return Results.Bandwidth.of(size, iters, n * iters, (last - start) / 1e9, peak.rate(), s.reportGbits());
    }

    private void writeCredit(int q, int count) throws PerftestException {
        while (creditWritesOutstanding >= Buffers.CREDIT_SLOTS) {
            Events.Event e = t.next("a credit Write", s.timeoutMs());
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
            Events.Event e = t.next("a credit Write", s.timeoutMs());
            if (!e.receive()) {
                creditWritesOutstanding--;
            }
        }
    }
}
