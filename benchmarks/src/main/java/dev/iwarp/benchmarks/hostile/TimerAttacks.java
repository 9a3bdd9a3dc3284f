package dev.iwarp.benchmarks.hostile;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/** Attacks on serve's per-connection timers: 4a (--idle-timeout, --drain-timeout), 4b (--message-deadline). */
final class TimerAttacks {
    private TimerAttacks() {
    }

    /**
     * 4a: one connection that never reads asks for IRD x 1 MiB of Read Responses, then sends a zero-length RDMA
     * Write every second, which moves no data. Check: serve closes it within max(--idle-timeout, --drain-timeout)
     * plus 3 s of the last Write that moved data.
     */
    static final class ZeroLengthWrites extends Attack {
        private Socket s;
        private RawIwarp.Target t;
        private long lastDataNanos;
        private volatile long closedNanos;

        ZeroLengthWrites(HostileLoad cfg) {
            super(cfg);
        }

        @Override
        String inputName() {
            return null; // a timer check: serve's CPU per zero-length Write means nothing
        }

        @Override
        void start() throws IOException {
            s = RawIwarp.connect(serve, address(1, 2), 5000);
            s.setReceiveBufferSize(64 * 1024);
            RawIwarp.Session ses = RawIwarp.startup(s, 16, 16, false);
            if (ses == null || ses.rejected() || ses.target() == null) {
                throw new IOException("serve refused the MPA startup");
            }
            t = ses.target();
            List<byte[]> parts = new ArrayList<>();
            parts.add(RawIwarp.write(t.stag(), t.to(), new byte[] {1, 2, 3, 4}));
            for (int r = 0; r < 16; r++) {
                parts.add(RawIwarp.readRequest(1 + r, Math.min(1 << 20, t.size()), t.stag(), t.to()));
            }
            OutputStream out = s.getOutputStream();
            out.write(RawIwarp.concat(parts.toArray(new byte[0][])));
            lastDataNanos = System.nanoTime();
            spawn("zero-writes", () -> {
                byte[] zero = RawIwarp.write(t.stag(), t.to(), new byte[0]);
                while (!stopping) {
                    sleep(1000);
                    if (!RawIwarp.tryWrite(out, zero)) {
                        closedNanos = System.nanoTime();
                        return;
                    }
                    inputs.incrementAndGet();
                }
            });
            sleep(1000);
        }

        private long boundMs() {
            return Math.max(cfg.idleTimeoutSec, cfg.drainTimeoutSec) * 1000L + 3000;
        }

        @Override
        List<String> finish() throws InterruptedException {
            long deadline = lastDataNanos + (boundMs() + 2000) * 1_000_000L;
            while (closedNanos == 0 && System.nanoTime() < deadline) {
                sleep(100);
            }
            stopThreads();
            RawIwarp.quietClose(s);
            double open = ((closedNanos != 0 ? closedNanos : System.nanoTime()) - lastDataNanos) / 1e9;
            System.out.printf("hostile %s: the never-reading connection %s %.1f s after its last data%n", cfg.attack,
                    closedNanos != 0 ? "was closed by serve" : "was still open", open);
            if (closedNanos == 0 || open * 1000 > boundMs() + 1000) { // + 1 s: a Write a second finds the close
                return List.of(String.format("a never-reading connection sending zero-length Writes stayed open "
                        + "%s%.1f s (bound: max(--idle-timeout %d s, --drain-timeout %d s) + 3 s)",
                        closedNanos == 0 ? "over " : "", open, cfg.idleTimeoutSec, cfg.drainTimeoutSec));
            }
            return List.of();
        }
    }

    /**
     * 4b: one segment carrying a complete FPDU (a 4-octet Write) and the first 10 octets of another, then silence.
     * Check: serve closes the connection within --message-deadline plus 2 s.
     */
    static final class PartialFpdu extends Attack {
        private Socket s;
        private long sentNanos;
        private volatile long closedNanos;

        PartialFpdu(HostileLoad cfg) {
            super(cfg);
        }

        @Override
        String inputName() {
            return null; // one segment: a timer check
        }

        @Override
        void start() throws IOException {
            s = RawIwarp.connect(serve, address(1, 2), 5000);
            RawIwarp.Session ses = RawIwarp.startup(s, 16, 16, false);
            if (ses == null || ses.rejected() || ses.target() == null) {
                throw new IOException("serve refused the MPA startup");
            }
            RawIwarp.Target t = ses.target();
            byte[] whole = RawIwarp.write(t.stag(), t.to(), new byte[] {1, 2, 3, 4});
            byte[] partial = java.util.Arrays.copyOf(RawIwarp.write(t.stag(), t.to() + 4, new byte[64]), 10);
            s.getOutputStream().write(RawIwarp.concat(whole, partial));
            sentNanos = System.nanoTime();
            inputs.incrementAndGet();
            spawn("partial-close", () -> {
                MemoryAttacks.drain(s, octetsIn);
                closedNanos = System.nanoTime();
            });
        }

        @Override
        List<String> finish() throws InterruptedException {
            long boundMs = cfg.messageDeadlineMs + 2000;
            long deadline = sentNanos + (boundMs + 2000) * 1_000_000L;
            while (closedNanos == 0 && System.nanoTime() < deadline) {
                sleep(50);
            }
            RawIwarp.quietClose(s);
            stopThreads();
            double open = ((closedNanos != 0 ? closedNanos : System.nanoTime()) - sentNanos) / 1e9;
            System.out.printf("hostile %s: the connection holding a partial FPDU %s %.1f s after it%n", cfg.attack,
                    closedNanos != 0 ? "was closed by serve" : "was still open", open);
            if (closedNanos == 0 || open * 1000 > boundMs) {
                return List.of(String.format("a partial FPDU behind a complete one kept the connection open %s%.1f s "
                        + "(bound: --message-deadline %d ms + 2 s)", closedNanos == 0 ? "over " : "", open,
                        cfg.messageDeadlineMs));
            }
            return List.of();
        }
    }
}
