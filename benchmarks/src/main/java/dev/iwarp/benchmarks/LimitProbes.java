package dev.iwarp.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * For {@link IdleConnections --check-limits}: one connection per limit of {@code serve}, each doing just what that
 * limit is for, and the time until serve closes it, while the idle connections are held: a socket that sends nothing
 * (first-octet timeout), a truncated MPA Request (startup timeout), an FPDU header and nothing more (message deadline),
 * and a session that moves no data (idle timeout). Each must close within [-10 %, +25 %] of its limit (the clock
 * starts at the client, a little after serve's).
 */
final class LimitProbes {
    private final InetSocketAddress server;
    private final long firstOctetMs;
    private final long startupMs;
    private final long deadlineMs;
    private final long idleMs;
    private final List<Probe> probes = new ArrayList<>();
    private IntSupplier held = () -> -1;

    private final class Probe extends Thread {
        final String limit;
        final long expectedMs;
        volatile long closedAfterMs = -1;
        volatile int heldWhenClosed = -1;
        volatile String problem;

        Probe(String limit, long expectedMs) {
            super("probe " + limit);
            setDaemon(true);
            this.limit = limit;
            this.expectedMs = expectedMs;
        }

        @Override
        public void run() {
            try (Socket s = new Socket()) {
                s.connect(server, 10_000);
                OutputStream out = s.getOutputStream();
                InputStream in = s.getInputStream();
                switch (limit) {
                    case "--first-octet-timeout" -> { }
                    case "--startup-timeout" -> out.write(request(), 0, 10);
                    default -> {
                        out.write(request());
                        readReply(in);
                        if (limit.equals("--message-deadline")) {
                            out.write(new byte[] {0, 100}); // an FPDU of 100 octets begins, and stops there
                        }
                    }
                }
                out.flush();
                long t0 = System.nanoTime();
                s.setSoTimeout((int) (expectedMs * 2 + 5_000));
                try {
                    while (in.read() >= 0) {
                        // nothing expected
                    }
                } catch (IOException reset) {
                    // closed with a reset: as good as a FIN here
                }
                closedAfterMs = (System.nanoTime() - t0) / 1_000_000;
                heldWhenClosed = held.getAsInt();
            } catch (IOException e) {
                problem = e.toString();
            }
        }
    }

    LimitProbes(InetSocketAddress server, long firstOctetMs, long startupMs,
                long deadlineMs, long idleMs) {
        this.server = server;
        this.firstOctetMs = firstOctetMs;
        this.startupMs = startupMs;
        this.deadlineMs = deadlineMs;
        this.idleMs = idleMs;
    }

    /** MPA Rev 1 Request: no markers, no CRC, no Private Data. */
    private static byte[] request() {
        byte[] r = new byte[20];
        System.arraycopy("MPA ID Req Frame".getBytes(StandardCharsets.US_ASCII), 0, r, 0, 16);
        r[17] = 1;
        return r;
    }

    private static void readReply(InputStream in) throws IOException {
        byte[] header = in.readNBytes(20);
        if (header.length < 20 || (header[16] & 0x20) != 0) {
            throw new IOException("no MPA Reply, or a reject");
        }
        int pd = (header[18] & 0xFF) << 8 | header[19] & 0xFF;
        in.readNBytes(pd);
    }

    void held(IntSupplier held) {
        this.held = held;
    }

    /** The idle probe: established now, it must close an idle timeout later. */
    void startIdle() {
        start(new Probe("--idle-timeout", idleMs));
    }

    void startOthers() {
        start(new Probe("--first-octet-timeout", firstOctetMs));
        start(new Probe("--startup-timeout", startupMs));
        start(new Probe("--message-deadline", deadlineMs));
    }

    private void start(Probe p) {
        probes.add(p);
        p.start();
    }

    /** Waits for every probe and prints each; whether all closed within [-10 %, +25 %] of their limit. */
    boolean await() throws InterruptedException {
        boolean ok = true;
        for (Probe p : probes) {
            p.join(TimeUnit.MILLISECONDS.toMillis(p.expectedMs * 2 + 15_000));
            boolean within = p.closedAfterMs >= p.expectedMs * 0.9 && p.closedAfterMs <= p.expectedMs * 1.25;
            System.out.printf("limit %s %d ms: closed after %s with %d other connections held: %s%n", p.limit,
                    p.expectedMs, p.closedAfterMs < 0 ? "(not closed: " + p.problem + ")" : p.closedAfterMs + " ms ("
                            + String.format("%+.1f %%", 100.0 * (p.closedAfterMs - p.expectedMs) / p.expectedMs) + ")",
                    p.heldWhenClosed, within ? "within 25 %" : "FAILED (outside -10 %..+25 %)");
            ok &= within;
        }
        return ok;
    }
}
