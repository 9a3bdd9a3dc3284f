package dev.iwarp.benchmarks.hostile;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** Attacks on what serve commits or sends on a peer's behalf: 1, 2, 5 (markers, Read amplification). */
final class MemoryAttacks {
    private MemoryAttacks() {
    }

    /** Reads and discards everything serve sends, counting octets, until the connection ends. */
    static void drain(Socket s, AtomicLong counter) {
        byte[] b = new byte[64 * 1024];
        try {
            InputStream in = s.getInputStream();
            for (int n; (n = in.read(b)) >= 0; ) {
                counter.addAndGet(n);
            }
        } catch (IOException e) {
            // reset or closed: the connection ended
        }
    }

    /**
     * 1: an MPA Request with IRD 0 (serve's ORD becomes 0, so no RDMA Read it posts can start), then 16-octet rping
     * advertisements as fast as serve takes them (each naming another buffer), inbound drained, on 4 connections
     * at once. A connection serve ends is opened again.
     */
    static final class Ird0Advertisements extends Attack {
        private final AtomicInteger connections = new AtomicInteger();

        Ird0Advertisements(HostileLoad cfg) {
            super(cfg);
        }

        @Override
        String inputName() {
            return "advertisements";
        }

        @Override
        void start() {
            for (int c = 0; c < 4; c++) {
                String local = address(1, 2 + c);
                spawn("ird0-" + c, () -> stream(local));
            }
            sleep(cfg.seconds * 1000L);
        }

        private void stream(String local) {
                while (!stopping) {
                    try (Socket s = RawIwarp.connect(serve, local, 5000)) {
                        RawIwarp.Session ses = RawIwarp.startup(s, 0, 16, false);
                        connections.incrementAndGet();
                        if (ses == null || ses.rejected()) {
                            sleep(100);
                            continue;
                        }
                        Thread reader = new Thread(() -> drain(s, octetsIn));
                        reader.setDaemon(true);
                        reader.start();
                        OutputStream out = s.getOutputStream();
                        byte[] batch = new byte[0];
                        for (int msn = 1; !stopping; msn += 64) {
                            List<byte[]> parts = new ArrayList<>();
                            for (int i = 0; i < 64; i++) { // each names another buffer, as a new rping would
                                parts.add(RawIwarp.advertisement(msn + i, 0x1000 + 64L * (msn + i), 0x77, 64));
                            }
                            batch = RawIwarp.concat(parts.toArray(new byte[0][]));
                            if (!RawIwarp.tryWrite(out, batch)) {
                                break; // serve ended the connection
                            }
                            inputs.addAndGet(64);
                            octetsOut.addAndGet(batch.length);
                        }
                    } catch (IOException e) {
                        sleep(100);
                    }
                }
        }

        @Override
        String figures() {
            return "connections=" + connections.get();
        }

        @Override
        List<String> finish() throws InterruptedException {
            stopThreads();
            return List.of();
        }
    }

    /**
     * 2: many connections, each making serve commit memory: the target region at first touch (a 1-octet Write), a
     * bench hello's receives (16 of 64 KiB), and 16 Read Responses of 64 KiB queued toward a peer that never reads.
     */
    static final class CommitMemory extends Attack {
        private final Queue<Socket> held = new ConcurrentLinkedQueue<>();
        private final AtomicInteger established = new AtomicInteger();
        private final AtomicInteger refused = new AtomicInteger();

        CommitMemory(HostileLoad cfg) {
            super(cfg);
        }

        @Override
        String inputName() {
            return "connections";
        }

        @Override
        void start() throws InterruptedException {
            AtomicInteger next = new AtomicInteger();
            for (int t = 0; t < 8; t++) {
                spawn("commit-" + t, () -> {
                    for (int i; (i = next.getAndIncrement()) < cfg.connections && !stopping; ) {
                        inputs.incrementAndGet();
                        try {
                            Socket s = RawIwarp.connect(serve, address(4 + i / 200, 2 + i % 200), 5000);
                            held.add(s);
                            RawIwarp.Session ses = RawIwarp.startup(s, 16, 16, false);
                            if (ses == null || ses.rejected() || ses.target() == null) {
                                refused.incrementAndGet();
                                continue;
                            }
                            established.incrementAndGet();
                            RawIwarp.Target target = ses.target();
                            List<byte[]> parts = new ArrayList<>();
                            parts.add(RawIwarp.benchHello(1, 65536, 16));
                            parts.add(RawIwarp.write(target.stag(), target.to(), new byte[] {1}));
                            int size = Math.min(65536, target.size());
                            for (int r = 0; r < 16; r++) {
                                parts.add(RawIwarp.readRequest(1 + r, size, target.stag(), target.to()));
                            }
                            RawIwarp.tryWrite(s.getOutputStream(), RawIwarp.concat(parts.toArray(new byte[0][])));
                        } catch (IOException e) {
                            refused.incrementAndGet();
                        }
                    }
                });
            }
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (next.get() < cfg.connections + 8 && System.nanoTime() < deadline) {
                sleep(50);
            }
            sleep(1000); // serve works through what the last ones sent
        }

        @Override
        String figures() {
            return "established=" + established.get() + " refused=" + refused.get();
        }

        @Override
        List<String> finish() throws InterruptedException {
            stopThreads();
            held.forEach(RawIwarp::quietClose);
            return List.of();
        }
    }

    /**
     * 5: 1 MiB RDMA Reads kept IRD deep on one connection, every response read. With {@code markers} the Request asks
     * serve to add MPA markers to its stream (RFC 5044 §5: serve must then refuse the connection, or pay for them);
     * without, the check is the Read Response byte rate against serve's {@code --read-rate}: never above it (+ 25 % +
     * 1 MiB/s), and not far below it either (a third), with the Reads outstanding always within the IRD serve grants.
     */
    static final class LargeReads extends Attack {
        private final boolean markers;
        private volatile boolean markersAccepted;
        private volatile String outcome = "not connected";
        private long rateStartNanos;
        private long rateStartOctets;
        private long rateEndNanos;
        private long rateEndOctets;
        private volatile int irdUsed;
        /** Read Responses whose last segment arrived. */
        private final AtomicLong responses = new AtomicLong();

        LargeReads(HostileLoad cfg, boolean markers) {
            super(cfg);
            this.markers = markers;
        }

        @Override
        String inputName() {
            return "Reads";
        }

        @Override
        void start() throws IOException {
            Socket s = RawIwarp.connect(serve, address(1, 2), 5000);
            RawIwarp.Session ses = RawIwarp.startup(s, 16, 16, markers);
            if (ses == null || ses.rejected() || ses.target() == null) {
                outcome = ses == null ? "serve closed the connection instead of an MPA Reply"
                        : ses.rejected() ? "serve rejected the MPA Request (R=1)" : "no target advertised";
                RawIwarp.quietClose(s);
                return;
            }
            markersAccepted = markers;
            outcome = "connected";
            RawIwarp.Target t = ses.target();
            int size = Math.min(1 << 20, t.size());
            // the Reads kept outstanding stay within the IRD serve's Reply grants (RFC 5040 §5.2: one more is a
            // Terminate, not a rate test); all of it with serve's default of 16
            int ird = ses.ird() > 0 ? Math.min(16, ses.ird()) : 1;
            irdUsed = ird;
            spawn("reads-in", () -> readResponses(s));
            spawn("reads-out", () -> {
                try {
                    OutputStream out = s.getOutputStream();
                    for (int msn = 1; !stopping; ) {
                        // a new Read only once a response's last segment arrived: never one beyond IRD
                        if (inputs.get() - responses.get() < ird) {
                            byte[] r = RawIwarp.readRequest(msn++, size, t.stag(), t.to());
                            if (!RawIwarp.tryWrite(out, r)) {
                                outcome = "serve closed the connection after " + inputs.get() + " Reads";
                                return;
                            }
                            inputs.incrementAndGet();
                            octetsOut.addAndGet(r.length);
                        } else {
                            sleep(1);
                        }
                    }
                } catch (IOException e) {
                    outcome = "ended: " + e;
                } finally {
                    RawIwarp.quietClose(s);
                }
            });
            sleep(1000); // past the first window's burst
            rateStartNanos = System.nanoTime();
            rateStartOctets = octetsIn.get();
            sleep(cfg.seconds * 1000L);
            rateEndNanos = System.nanoTime();
            rateEndOctets = octetsIn.get();
        }

        /**
         * Reads serve's FPDUs (RFC 5044 §4.1: ULPDU_Length, the ULPDU, pad, CRC; no markers on this connection),
         * counting their octets and each Read Response's last segment (DDP tagged, L=1, RDMAP opcode 0010); a
         * Terminate (opcode 0111) ends the count and says so.
         */
        private void readResponses(Socket s) {
            try {
                java.io.DataInputStream in = new java.io.DataInputStream(
                        new java.io.BufferedInputStream(s.getInputStream(), 64 * 1024));
                byte[] b = new byte[64 * 1024 + 8];
                while (!stopping) {
                    int len = in.readUnsignedShort();
                    int rest = len + (4 - (2 + len) % 4) % 4 + 4;
                    in.readFully(b, 0, rest);
                    octetsIn.addAndGet(2 + rest);
                    int control = b[0] & 0xFF;
                    int opcode = b[1] & 0x0F;
                    if ((control & 0xC0) == 0xC0 && opcode == 2) {
                        responses.incrementAndGet();
                    } else if ((control & 0x80) == 0 && opcode == 7) {
                        outcome = "serve sent a Terminate after " + inputs.get() + " Reads";
                        return;
                    }
                }
            } catch (IOException e) {
                // reset or closed: the connection ended
            }
        }

        private double rate() {
            return rateEndNanos == rateStartNanos ? 0
                    : (rateEndOctets - rateStartOctets) / ((rateEndNanos - rateStartNanos) / 1e9);
        }

        @Override
        String figures() {
            return String.format("outcome=\"%s\" ird=%d responses=%d read_response_rate=%.0fB/s amplification=%.0f",
                    outcome, irdUsed, responses.get(), rate(), octetsOut.get() == 0 ? 0.0 : (double) octetsIn.get() / octetsOut.get());
        }

        @Override
        List<String> finish() throws InterruptedException {
            stopThreads();
            List<String> failed = new ArrayList<>();
            if (markers && markersAccepted) {
                failed.add("serve accepted a connection asking for MPA markers on its defaults (bound: refused, as "
                        + "siw does, unless --allow-markers)");
            }
            if (!markers && cfg.readRate > 0 && rate() > cfg.readRate * 1.25 + (1 << 20)) {
                failed.add(String.format("Read Responses at %.1f MB/s to one peer (bound: --read-rate %d B/s + 25%%"
                        + " + 1 MiB/s)", rate() / 1e6, cfg.readRate));
            }
            // the limit is enforced near its value, not merely never exceeded: with IRD x 1 MiB asked for at all
            // times serve always has responses to send, so only its rate limit (or a machine too loaded to move
            // 2 MiB/s) holds it back. A third of the rate leaves room for a loaded 2-core machine (2 MiB/s measured
            // 2.10 MB/s at load average 28 and 0.89 MB/s at 40, the attacker and serve starved of CPU)
            if (!markers && cfg.readRate > 0 && rate() < cfg.readRate / 3.0) {
                failed.add(String.format("Read Responses at %.2f MB/s to one peer asking for more at all times "
                        + "(bound: at least a third of --read-rate %d B/s; outcome: %s)", rate() / 1e6, cfg.readRate,
                        outcome));
            }
            return failed;
        }
    }
}
