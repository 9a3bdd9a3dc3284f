package dev.iwarp.server.perftest;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.server.wire.Addresses;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.server.wire.ServerWire;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import io.netty.channel.Channel;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
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
 * This class opens and closes the connections; {@link ControlFlow} runs the exchanges on A and
 * {@link PerftestServerSide} takes the server's connection requests.
 */
public final class PerftestRun {
    private final PerftestSettings s;
    private final PrintWriter out;
    private final PrintWriter err;
    private final Events dataEvents = new Events();
    private final List<DataQp> data = new ArrayList<>();
    private final PerftestVersion announce;

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
        ControlFlow x = new ControlFlow(s, out, ctl, announce, data, dataEvents);
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
        PerftestServerSide side = new PerftestServerSide(s, err, domain, ctl, data, dataEvents);
        ServerWire wire = IwarpWire.server(stack, dev.iwarp.bootstrap.ListenOptions.mpa(mpa(s.outReads())).tls(s.tls()), false);
        ServerWire.Listener listener;
        try {
            listener = wire.listen(s.address(), side::accepted, side::request);
        } catch (Exception e) {
            throw new PerftestException("cannot listen on " + Addresses.format(s.address()) + ": " + Addresses.reason(e));
        }
        try {
            // perftest's banner, with where we listen
            out.println();
            out.println("************************************");
            out.println("* Waiting for client to connect... *");
            out.println("************************************");
            out.println(" (" + s.test().command() + " -R listening on " + Addresses.format(listener.localAddress()) + ")");
            out.flush();
            WireConnection a = side.awaitControl();
            ControlFlow x = new ControlFlow(s, out, ctl, announce, data, dataEvents).side(side);
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
        a.closeGracefully(s.timeoutMs());
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
