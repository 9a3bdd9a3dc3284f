package dev.iwarp.server.perftest;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.server.wire.ServerWire;
import dev.iwarp.server.wire.WireConnectRequest;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import io.netty.channel.Channel;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One perftest run with RDMA-CM ({@code -R}), server or client: control connection A with its lock-step Sends, the
 * data connection(s) B, the data phase of the test, the report and close exchanges and the teardown. The control
 * flow, per size of {@code -a}:
 * <pre>
 *   version, page size, cache line, MTU, [6.28 negotiation], barrier | B connects | barrier,
 *   dest (per QP), dest (per QP), dest,
 *   write_bw, read_bw:  traffic, dest, 5 report messages ... dest (close)
 *   send_bw:            dest, traffic ... dest (close)
 *   write_lat:          dest, traffic
 *   read_lat, send_lat: dest, traffic ... dest (close)
 * </pre>
 */
public final class PerftestRun {
    private final PerftestSettings s;
    private final PrintWriter out;
    private final PrintWriter err;
    private final Events dataEvents = new Events();
    private final List<DataQp> data = new ArrayList<>();
    /** perftest 6.28's negotiation message without mlx5dv (320 with it). */
    static final int NEGOTIATION_LENGTH = 312;
    private final PerftestVersion announce;
    private PerftestVersion peerVersion;

    public PerftestRun(PerftestSettings s, PrintWriter out, PrintWriter err) {
        this(s, out, err, PerftestVersion.OURS);
    }

    /** As above, announcing {@code announce} (tests of the version policy play older and newer peers). */
    PerftestRun(PerftestSettings s, PrintWriter out, PrintWriter err, PerftestVersion announce) {
        this.s = s;
        this.out = out;
        this.err = err;
        this.announce = announce;
    }

    /** Runs; returns the exit code (0 done, 1 failed, one line on {@code err} saying why). */
    public int run() {
        try (IwarpStack stack = IwarpStack.builder().threads(1).build()) {
            WireDomain domain = IwarpWire.domain(stack.allocPd());
            ControlChannel ctl = new ControlChannel(domain, s.client(), s.timeoutMs());
            try {
                if (s.client()) {
                    client(stack, domain, ctl);
                } else {
                    server(stack, domain, ctl);
                }
                return 0;
            } catch (PerftestException e) {
                err.println(s.test().command() + ": " + e.getMessage());
                abort(ctl);
                return 1;
            } finally {
                ctl.release();
            }
        }
    }

    private void abort(ControlChannel ctl) {
        for (DataQp d : data) {
            d.conn.channel().close().awaitUninterruptibly(s.timeoutMs());
        }
        if (ctl.connection() != null) {
            ctl.connection().channel().close().awaitUninterruptibly(s.timeoutMs());
        }
    }

    // ---- connection setup

    /**
     * MPA as perftest over siw negotiates it: Rev 2 enhanced, no CRC unless the peer asks, IRD = ORD = the read
     * depth (0 on the control connection and for Write/Send tests). The server's side waives RFC 5044 §7.1.2 rule 4
     * (Responder sends no FPDU before the Initiator's first): an ib_write_lat server writes first on connection B,
     * as siw lets it.
     */
    private MpaSettings mpa(int depth) {
        return MpaSettings.builder().revision(2).crc(false).ird(depth).ord(depth)
                .responderMaySendFirst(!s.client()).build();
    }

    private void client(IwarpStack stack, WireDomain domain, ControlChannel ctl) throws PerftestException {
        ClientWire wire = IwarpWire.client(stack, mpa(0), s.tls());
        WireConnection a = connect(wire, domain, ctl.listener(), ctl::attach, 0, "control");
        // siw as Responder may leave an FPDU unread that arrives right after its MPA Reply
        sleep(500);
        Exchange x = new Exchange(ctl);
        x.preamble(() -> {
            int depth = s.test().op() == PerftestTest.Op.READ ? s.outReads() : 0;
            ClientWire dataWire = IwarpWire.client(stack, mpa(depth), s.tls());
            for (int q = 0; q < s.qps(); q++) {
                int index = q;
                WireConnection b = connectRetrying(dataWire, domain, dataEvents.listener(q), depth, "data " + q);
                data.add(new DataQp(index, b));
            }
        });
        x.rest(domain);
        teardown(a, true);
    }

    private WireConnection connect(ClientWire wire, WireDomain domain, dev.iwarp.server.wire.WireCompletionListener l,
                                   java.util.function.Consumer<WireConnection> before, int depth, String which)
            throws PerftestException {
        try {
            return wire.connect(s.address(), domain, false, depth, l, before, s.timeoutMs());
        } catch (IOException e) {
            throw new PerftestException("cannot open the " + which + " connection: " + e.getMessage());
        }
    }

    /** Connection B: the server may be between listeners (perftest re-listens after the barrier), so retry. */
    private WireConnection connectRetrying(ClientWire wire, WireDomain domain, dev.iwarp.server.wire.WireCompletionListener l,
                                           int depth, String which) throws PerftestException {
        PerftestException last = null;
        for (int attempt = 0; attempt < 20; attempt++) {
            try {
                return connect(wire, domain, l, c -> { }, depth, which);
            } catch (PerftestException e) {
                last = e;
                sleep(100);
            }
        }
        throw last;
    }

    private void server(IwarpStack stack, WireDomain domain, ControlChannel ctl) throws PerftestException {
        ServerSide side = new ServerSide(domain, ctl);
        ServerWire wire = IwarpWire.server(stack, dev.iwarp.bootstrap.ListenOptions.mpa(mpa(s.outReads())).tls(s.tls()), false);
        ServerWire.Listener listener;
        try {
            listener = wire.listen(s.address(), side::accepted, side::request);
        } catch (Exception e) {
            throw new PerftestException("cannot listen on " + s.address() + ": " + e.getMessage());
        }
        try {
            // perftest's banner, with where we listen
            out.println();
            out.println("************************************");
            out.println("* Waiting for client to connect... *");
            out.println("************************************");
            out.println(" (" + s.test().command() + " -R listening on " + listener.localAddress().getAddress().getHostAddress()
                    + ":" + listener.localAddress().getPort() + ")");
            out.flush();
            WireConnection a = side.awaitControl();
            Exchange x = new Exchange(ctl);
            x.side = side;
            x.preamble(() -> {
                synchronized (side) {
                    side.expectingData = true;
                }
            });
            x.rest(domain);
            teardown(a, false);
        } finally {
            synchronized (side) {
                side.closed = true;
            }
            listener.close();
        }
    }

    /** The server's listener callbacks: the first connection request is A, the next -q after the barrier are B. */
    private final class ServerSide {
        private final WireDomain domain;
        private final ControlChannel ctl;
        WireConnection control;
        boolean expectingData;
        boolean closed;

        ServerSide(WireDomain domain, ControlChannel ctl) {
            this.domain = domain;
            this.ctl = ctl;
        }

        void accepted(Channel ch) {
            // a perftest client without -R speaks its TCP text protocol: no MPA Request ever comes
            ch.closeFuture().addListener(f -> {
                synchronized (this) {
                    if (control == null && !closed) {
                        err.println(s.test().command() + ": " + ch.remoteAddress() + " closed without an MPA Request"
                                + " (a perftest client must run with -R: only RDMA-CM mode is supported)");
                    }
                }
            });
        }

        synchronized void request(WireConnectRequest r) {
            if (closed) {
                r.reject();
            } else if (control == null) {
                control = r.accept(domain, ctl.listener(), new byte[0]);
                ctl.attach(control);
                notifyAll();
            } else if (expectingData && data.size() < s.qps()) {
                data.add(new DataQp(data.size(), r.accept(domain, dataEvents.listener(data.size()), new byte[0])));
                notifyAll();
            } else {
                err.println(s.test().command() + ": refused a connection from " + r.channel().remoteAddress()
                        + (expectingData ? " beyond -q " + s.qps() : " while a test runs"));
                r.reject();
            }
        }

        synchronized WireConnection awaitControl() throws PerftestException {
            while (control == null) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new PerftestException("interrupted");
                }
            }
            return control;
        }

        synchronized void awaitData() throws PerftestException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(s.timeoutMs());
            while (data.size() < s.qps()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new PerftestException("only " + data.size() + " of " + s.qps() + " data connections arrived"
                            + " within " + s.timeoutMs() + " ms: does the client's -q match?");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new PerftestException("interrupted");
                }
            }
        }
    }

    // ---- the control flow

    private interface Step {
        void run() throws PerftestException;
    }

    private final class Exchange {
        private final ControlChannel ctl;
        private int pageSize = ControlMessages.PAGE_SIZE;
        private int cacheLine = ControlMessages.CACHE_LINE;
        private int mtu = 1024;
        private ServerSide side;

        Exchange(ControlChannel ctl) {
            this.ctl = ctl;
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
                if (!java.util.Arrays.equals(mine, ctl.exchange("parameter negotiation", mine))) {
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

        private ServerSide serverSideOf() {
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
            Traffic t = new Traffic(s, data, dataEvents, buf, cycle, cacheLine);
            for (int size : s.sizes()) {
                oneSize(t, size, first, wide);
            }
            if (s.test() != PerftestTest.WRITE_LAT) {
                dest(ctl.exchange("close", first.local.encode(wide)));
            }
            if (s.test().bandwidth() || !(s.test() == PerftestTest.READ_LAT && !s.client())) {
                out.println(Results.LINE);
            }
            out.flush();
        }

        private void oneSize(Traffic t, int size, DataQp first, boolean wide) throws PerftestException {
            PerftestTest test = s.test();
            if (test.trafficBeforeLastSync()) {
                if (s.client()) {
                    Results.Bandwidth b = t.requester(size);
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
                case SEND_BW -> out.println(Results.bandwidthLine(s.client() ? t.sender(size) : t.receiver(size)));
                case WRITE_LAT -> latency(size, t.writeLatency(size), true);
                case READ_LAT -> latency(size, t.readLatency(size), false);
                case SEND_LAT -> latency(size, t.sendLatency(size), true);
                default -> throw new IllegalStateException(test.name());
            }
            out.flush();
        }

        private void latency(int size, Traffic.LatencySamples samples, boolean halve) {
            long iters = s.durationSec() > 0 ? samples.count : s.iterations();
            out.println(Results.latencyLine(size, iters, samples.ns, samples.count, halve));
        }
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

    // ---- teardown

    /**
     * Connection B first, then A; a FIN each, no Terminate. Satisfies every perftest version: Debian's 4.5 client
     * disconnects B itself, 24.04+ clients wait for the server to, so the server closes B at once and the client
     * waits briefly for that before closing B itself.
     */
    private void teardown(WireConnection a, boolean client) {
        if (client) {
            awaitClosed(data.stream().map(d -> d.conn.channel()).toList(), 2000);
        }
        for (DataQp d : data) {
            d.close(s.timeoutMs());
        }
        if (!client) {
            awaitClosed(List.of(a.channel()), 2000);
        }
        if (a instanceof IwarpWire.Connection c && c.queuePair() != null) {
            c.queuePair().close().awaitUninterruptibly(s.timeoutMs());
        }
        a.channel().close().awaitUninterruptibly(s.timeoutMs());
    }

    private static void awaitClosed(List<Channel> channels, long ms) {
        long deadline = System.nanoTime() + ms * 1_000_000L;
        for (Channel ch : channels) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                ch.closeFuture().awaitUninterruptibly(TimeUnit.NANOSECONDS.toMillis(left));
            }
        }
    }

    private static void sleep(long ms) throws PerftestException {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PerftestException("interrupted");
        }
    }
}
