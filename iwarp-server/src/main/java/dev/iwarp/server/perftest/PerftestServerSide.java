package dev.iwarp.server.perftest;

import dev.iwarp.server.wire.Addresses;
import dev.iwarp.server.wire.WireConnectRequest;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import io.netty.channel.Channel;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The server's listener callbacks of one {@link PerftestRun}: the first connection request is control connection A,
 * the next {@code -q} after the barrier are the data connections B; any other is refused with one line on
 * {@code err}. Guarded by its own monitor (the listener calls it on event loop threads, the run waits on it).
 */
final class PerftestServerSide {
    private final PerftestSettings s;
    private final PrintWriter err;
    private final WireDomain domain;
    private final ControlChannel ctl;
    private final List<DataQp> data;
    private final Events dataEvents;
    WireConnection control;
    boolean expectingData;
    boolean closed;

    PerftestServerSide(PerftestSettings s, PrintWriter err, WireDomain domain, ControlChannel ctl, List<DataQp> data,
                       Events dataEvents) {
        this.s = s;
        this.err = err;
        this.domain = domain;
        this.ctl = ctl;
        this.data = data;
        this.dataEvents = dataEvents;
    }

    void accepted(Channel ch) {
        // a perftest client without -R speaks its TCP text protocol: no MPA Request ever comes
        ch.closeFuture().addListener(f -> {
            synchronized (this) {
                if (control == null && !closed) {
                    err.println(s.test().command() + ": " + Addresses.format(ch.remoteAddress()) + " closed without an MPA Request"
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
            err.println(s.test().command() + ": refused a connection from " + Addresses.format(r.channel().remoteAddress())
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
