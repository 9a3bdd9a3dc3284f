package dev.iwarp.server.perftest;

import dev.iwarp.server.wire.WireDomain;

import java.io.PrintWriter;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The control flow of one {@link PerftestRun} on control connection A, after A is up: the preamble (version, page
 * size, cache line, MTU, [6.28 negotiation], barrier, with the data connections opened at their place), the
 * destination exchanges, then per size the traffic ({@link BandwidthTraffic}, {@link LatencyTraffic}) and the
 * report and close exchanges, printing perftest's output ({@link Results}). The order is in {@link PerftestRun}'s
 * class comment.
 */
final class ControlFlow {
    /** perftest 6.28's negotiation message without mlx5dv (320 with it). */
    static final int NEGOTIATION_LENGTH = 312;

    /** One step the preamble runs at its place in the flow (opening the data connections). */
    interface Step {
        void run() throws PerftestException;
    }

    private final PerftestSettings s;
    private final PrintWriter out;
    private final ControlChannel ctl;
    private final PerftestVersion announce;
    private final List<DataQp> data;
    private final Events dataEvents;
    private PerftestVersion peerVersion;
    private int pageSize = ControlMessages.PAGE_SIZE;
    private int cacheLine = ControlMessages.CACHE_LINE;
    private int mtu = 1024;
    private PerftestServerSide side;

    ControlFlow(PerftestSettings s, PrintWriter out, ControlChannel ctl, PerftestVersion announce, List<DataQp> data,
                Events dataEvents) {
        this.s = s;
        this.out = out;
        this.ctl = ctl;
        this.announce = announce;
        this.data = data;
        this.dataEvents = dataEvents;
    }

    /** On the server: its listener callbacks, whose data connections {@link #rest} waits for. */
    ControlFlow side(PerftestServerSide side) {
        this.side = side;
        return this;
    }

    /** Version, page size, cache line, MTU, [6.28 negotiation], barrier; then {@code openData}. */
    void preamble(Step openData) throws PerftestException {
        byte[] v = ctl.exchange("version", announce.encode());
        try {
            peerVersion = PerftestVersion.decode(v, v.length);
        } catch (IllegalArgumentException e) {
            throw new PerftestException("the peer's first control message is not a perftest version ("
                    + e.getMessage() + "): is it perftest with -R, running " + s.test().command() + "?");
        }
        if (peerVersion.isBefore(PerftestVersion.FLOOR)) {
            throw new PerftestException("the peer runs perftest " + peerVersion + "; versions older than "
                    + PerftestVersion.FLOOR + " use another control flow and are not supported");
        }
        pageSize = Math.max(pageSize, ControlMessages.int32(ctl.exchange("page size",
                ControlMessages.int32(ControlMessages.PAGE_SIZE)), "page size"));
        cacheLine = Math.max(cacheLine, ControlMessages.int32(ctl.exchange("cache line",
                ControlMessages.int32(ControlMessages.CACHE_LINE)), "cache line"));
        int theirMtu = ControlMessages.mtuOctets(ctl.exchange("MTU", ControlMessages.mtu(ControlMessages.MTU_ENUM)));
        mtu = theirMtu > 0 ? Math.min(1024, theirMtu) : 1024;
        if (s.client() && announce.compareTo(PerftestVersion.NEGOTIATES_ALWAYS) == 0) {
            // playing a 6.28 client (tests): its negotiation message, which the server must echo
            byte[] mine = new byte[NEGOTIATION_LENGTH];
            if (!Arrays.equals(mine, ctl.exchange("parameter negotiation", mine))) {
                throw new PerftestException("the server did not echo the parameter negotiation message");
            }
        } else if (peerVersion.compareTo(PerftestVersion.NEGOTIATES_ALWAYS) == 0) {
            if (s.client()) {
                throw new PerftestException("the server runs perftest 6.28, which negotiates parameters in a "
                        + "message only perftest itself fills in; run its client against our server instead");
            }
            // answer perftest 6.28's parameter negotiation with its own message: every compared field matches
            ctl.exchangeEcho("parameter negotiation");
        }
        if (!s.client()) {
            openData.run(); // before our barrier answer: the client connects B as soon as it has it
        }
        ctl.exchange("barrier", ControlMessages.barrier());
        if (s.client()) {
            openData.run();
        }
    }

    void rest(WireDomain domain) throws PerftestException {
        if (!s.client()) {
            serverSideOf().awaitData();
        }
        int cycle = pageSize;
        Buffers buf = new Buffers(domain, Math.max(s.maxSize(), cycle), s.qps());
        try {
            run(buf, cycle);
        } finally {
            buf.release();
        }
    }

    private PerftestServerSide serverSideOf() {
        return side;
    }

    private void run(Buffers buf, int cycle) throws PerftestException {
        boolean send = s.test().op() == PerftestTest.Op.SEND;
        boolean wide = !peerVersion.isBefore(PerftestVersion.WIDE_DEST);
        int psn = ThreadLocalRandom.current().nextInt(1 << 24);
        int outReads = s.test().op() == PerftestTest.Op.READ ? s.outReads() : 1;
        for (DataQp d : data) {
            int rkey = send ? buf.creditRegion.remoteHandle() : buf.dataRegion.remoteHandle();
            long vaddr = send ? buf.creditRegion.remoteAddress(Buffers.creditWordOffset(d.index))
                    : buf.dataRegion.remoteAddress(0);
            d.local = PingpongDest.of((s.client() ? 3 : 4) + 2 * d.index, psn + d.index, outReads, rkey, vaddr);
        }
        ctl.exchange("barrier after connecting", ControlMessages.barrier());
        for (int round = 0; round < 2; round++) {
            for (DataQp d : data) {
                d.remote = dest(ctl.exchange("destination of QP " + d.index, d.local.encode(wide)));
            }
        }
        DataQp first = data.get(0);
        dest(ctl.exchange("synchronisation", first.local.encode(wide)));
        int txDepth = s.txDepth();
        Results.header(out, s, mtu, txDepth);
        Results.addresses(out, first.local, first.remote);
        if (s.test().bandwidth()) {
            Results.bandwidthTitle(out, s.reportGbits());
        } else {
            Results.latencyTitle(out);
        }
        out.flush();
        Traffic t = new Traffic(s, data, dataEvents, buf);
        BandwidthTraffic bandwidth = new BandwidthTraffic(t, cycle, cacheLine);
        LatencyTraffic latency = new LatencyTraffic(t);
        for (int size : s.sizes()) {
            oneSize(t, bandwidth, latency, size, first, wide);
        }
        if (s.test() != PerftestTest.WRITE_LAT) {
            dest(ctl.exchange("close", first.local.encode(wide)));
        }
        if (s.test().bandwidth() || !(s.test() == PerftestTest.READ_LAT && !s.client())) {
            out.println(Results.LINE);
        }
        out.flush();
    }

    private void oneSize(Traffic t, BandwidthTraffic bandwidth, LatencyTraffic latency, int size, DataQp first,
                         boolean wide) throws PerftestException {
        PerftestTest test = s.test();
        if (test.trafficBeforeLastSync()) {
            if (s.client()) {
                Results.Bandwidth b = bandwidth.requester(size);
                dest(ctl.exchange("synchronisation after the traffic", first.local.encode(wide)));
                ctl.exchange("report: size", ControlMessages.u64(b.size()));
                ctl.exchange("report: iterations", ControlMessages.u64(b.iterations()));
                ctl.exchange("report: peak bandwidth", ControlMessages.float64(b.peak()));
                ctl.exchange("report: average bandwidth", ControlMessages.float64(b.average()));
                ctl.exchange("report: message rate", ControlMessages.float64(b.msgRate()));
                out.println(Results.bandwidthLine(b));
            } else {
                // passive: the client's Writes or Reads need nothing from us; wait for its dest after them
                ctl.exchangeWaiting("synchronisation after the traffic", first.local.encode(wide), passiveWaitMs());
                long rSize = ControlMessages.u64(ctl.exchange("report: size", new byte[8]));
                long rIters = ControlMessages.u64(ctl.exchange("report: iterations", new byte[8]));
                double peak = ControlMessages.float64(ctl.exchange("report: peak bandwidth", new byte[8]));
                double avg = ControlMessages.float64(ctl.exchange("report: average bandwidth", new byte[8]));
                double rate = ControlMessages.float64(ctl.exchange("report: message rate", new byte[8]));
                // perftest's server prints the client's figures
                out.println(Results.bandwidthLine(new Results.Bandwidth(rSize, rIters, peak, avg, rate)));
            }
            out.flush();
            return;
        }
        if (test.op() == PerftestTest.Op.SEND && (!s.client() || !test.bandwidth())) {
            t.prepareReceives(size); // receives before the last sync: the peer Sends right after it
        }
        if (test == PerftestTest.READ_LAT && !s.client()) {
            dest(ctl.exchange("synchronisation", first.local.encode(wide)));
            return; // passive: the client's Reads need nothing from us; the close exchange waits for them
        }
        dest(ctl.exchange("synchronisation", first.local.encode(wide)));
        switch (test) {
            case SEND_BW -> out.println(Results.bandwidthLine(s.client() ? bandwidth.sender(size)
                    : bandwidth.receiver(size)));
            case WRITE_LAT -> printLatency(size, latency.writeLatency(size), true);
            case READ_LAT -> printLatency(size, latency.readLatency(size), false);
            case SEND_LAT -> printLatency(size, latency.sendLatency(size), true);
            default -> throw new IllegalStateException(test.name());
        }
        out.flush();
    }

    private void printLatency(int size, LatencySamples samples, boolean halve) {
        long iters = s.durationSec() > 0 ? samples.count : s.iterations();
        out.println(Results.latencyLine(size, iters, samples.ns, samples.count, halve));
    }

    /** How long a passive server waits for the client's message after the traffic: the traffic's own time too. */
    private long passiveWaitMs() {
        return s.timeoutMs() + s.durationSec() * 1000L + s.iterations() * s.sizes().size() * 2;
    }

    private static PingpongDest dest(byte[] m) throws PerftestException {
        try {
            return PingpongDest.decode(m, m.length);
        } catch (IllegalArgumentException e) {
            throw new PerftestException("the peer sent a " + e.getMessage()
                    + ": does it run the same test, with the same -a/-D/-q?");
        }
    }
}
