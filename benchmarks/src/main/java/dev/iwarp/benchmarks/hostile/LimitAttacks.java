package dev.iwarp.benchmarks.hostile;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/** Attacks on serve's per-source limits, handshakes and log: 3, 5 (TLS), 6 (its timers: {@link TimerAttacks}). */
final class LimitAttacks {
    private LimitAttacks() {
    }

    /** True if serve closed or reset {@code s} (a read that ends or fails rather than timing out). */
    static boolean closedByServe(Socket s) {
        try {
            s.setSoTimeout(1);
            InputStream in = s.getInputStream();
            byte[] b = new byte[4096];
            while (true) {
                if (in.read(b) < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true;
        }
    }

    /**
     * 3: full MPA connections from 8 addresses of one /24, 100 each, then silent sockets (never a first octet)
     * from 12 addresses of another /24, 50 each. Checks: serve accepted no more than --max-per-source from the
     * first /24, and closed every silent socket within --first-octet-timeout plus 2 s.
     */
    static final class PerPrefix extends Attack {
        private final Queue<Socket> established = new ConcurrentLinkedQueue<>();
        private final Queue<Socket> silent = new ConcurrentLinkedQueue<>();
        private final AtomicInteger refused = new AtomicInteger();
        private long silentAt;

        PerPrefix(HostileLoad cfg) {
            super(cfg);
        }

        @Override
        String inputName() {
            return "connections";
        }

        @Override
        void start() throws InterruptedException {
            AtomicInteger next = new AtomicInteger();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                Thread w = new Thread(() -> {
                    for (int i; (i = next.getAndIncrement()) < 800; ) {
                        inputs.incrementAndGet();
                        try {
                            Socket s = RawIwarp.connect(serve, address(1, 2 + i % 8), 5000);
                            RawIwarp.Session ses = RawIwarp.startup(s, 1, 1, false);
                            if (ses == null || ses.rejected() || closedByServe(s)) {
                                refused.incrementAndGet();
                                RawIwarp.quietClose(s);
                            } else {
                                established.add(s);
                            }
                        } catch (IOException e) {
                            refused.incrementAndGet();
                        }
                    }
                });
                w.start();
                workers.add(w);
            }
            for (Thread w : workers) {
                w.join(90_000);
            }
            silentAt = System.nanoTime();
            for (int i = 0; i < 600; i++) {
                inputs.incrementAndGet();
                try {
                    silent.add(RawIwarp.connect(serve, address(2, 2 + i % 12), 5000));
                } catch (IOException e) {
                    refused.incrementAndGet();
                }
            }
            sleep(500);
        }

        private int stillEstablished() {
            int n = 0;
            for (Socket s : established) {
                n += closedByServe(s) ? 0 : 1;
            }
            return n;
        }

        private int silentOpen() {
            int n = 0;
            for (Socket s : silent) {
                n += closedByServe(s) ? 0 : 1;
            }
            return n;
        }

        @Override
        String figures() {
            return "established_from_one_24=" + established.size() + " refused=" + refused.get();
        }

        @Override
        List<String> finish() {
            List<String> failed = new ArrayList<>();
            int held = stillEstablished();
            if (cfg.maxPerSource > 0 && held > cfg.maxPerSource) {
                failed.add(held + " MPA connections held from 8 addresses of one /24 (bound: --max-per-source "
                        + cfg.maxPerSource + " per /24)");
            }
            long waitMs = cfg.firstOctetTimeoutMs + 2000 - (System.nanoTime() - silentAt) / 1_000_000;
            sleep(Math.max(0, waitMs));
            int open = silentOpen();
            double after = (System.nanoTime() - silentAt) / 1e9;
            System.out.printf("hostile %s: %d of %d silent sockets still open %.1f s after connecting%n", cfg.attack,
                    open, silent.size(), after);
            if (open > 0) {
                failed.add(String.format("%d silent sockets still open %.1f s after connecting (bound: 0 after "
                        + "--first-octet-timeout %d ms + 2 s)", open, after, cfg.firstOctetTimeoutMs));
            }
            established.forEach(RawIwarp::quietClose);
            silent.forEach(RawIwarp::quietClose);
            return failed;
        }
    }

    /** 5 (TLS): TLS handshakes from 4 addresses of one /24 as fast as serve completes them, each then closed. */
    static final class TlsFlood extends Attack {
        private final AtomicInteger completed = new AtomicInteger();
        private long startNanos;
        private long endNanos;

        TlsFlood(HostileLoad cfg) {
            super(cfg);
        }

        @Override
        String inputName() {
            return "handshakes";
        }

        @Override
        void start() throws Exception {
            SSLContext ctx = SSLContext.getInstance("TLSv1.3");
            ctx.init(null, new TrustManager[] {new X509TrustManager() {
                @Override
                public void checkClientTrusted(X509Certificate[] chain, String authType) {
                }

                @Override
                public void checkServerTrusted(X509Certificate[] chain, String authType) {
                    // an attacker trusts anything: it wants serve's CPU, not its identity
                }

                @Override
                public X509Certificate[] getAcceptedIssuers() {
                    return new X509Certificate[0];
                }
            }}, null);
            startNanos = System.nanoTime();
            for (int t = 0; t < 4; t++) {
                String local = address(3, 2 + t);
                spawn("tls-" + t, () -> {
                    while (!stopping) {
                        inputs.incrementAndGet();
                        try (Socket raw = RawIwarp.connect(serve, local, 5000);
                             SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(raw, cfg.host, cfg.port,
                                     true)) {
                            s.setSoTimeout(5000);
                            s.startHandshake();
                            completed.incrementAndGet();
                        } catch (IOException e) {
                            sleep(10); // refused or reset: try again
                        }
                    }
                });
            }
            sleep(cfg.seconds * 1000L);
        }

        private double rate() {
            long end = endNanos != 0 ? endNanos : System.nanoTime();
            return completed.get() / ((end - startNanos) / 1e9);
        }

        @Override
        String figures() {
            return String.format("handshakes_completed=%d (%.1f/s)", completed.get(), rate());
        }

        @Override
        List<String> finish() throws InterruptedException {
            endNanos = System.nanoTime();
            stopThreads();
            if (cfg.tlsHandshakeRate > 0 && rate() > cfg.tlsHandshakeRate * 1.25 + 2) {
                return List.of(String.format("%.1f TLS handshakes/s completed from one /24 (bound: "
                        + "--tls-handshake-rate %d/s + 25%% + 2/s)", rate(), cfg.tlsHandshakeRate));
            }
            return List.of();
        }
    }

    /**
     * 6: a connection-rate flood (full MPA startups, closed at once, from 8 /24s) interleaved with malformed startups
     * (an HTTP request instead of an MPA Request) from 256 addresses. The bound on serve's log lines is checked by
     * the script from serve's log.
     */
    static final class LogFlood extends Attack {
        private static final byte[] GARBAGE = "GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes();
        private final AtomicInteger malformed = new AtomicInteger();

        LogFlood(HostileLoad cfg) {
            super(cfg);
        }

        @Override
        String inputName() {
            return "connections";
        }

        @Override
        void start() {
            AtomicInteger next = new AtomicInteger();
            for (int t = 0; t < 4; t++) {
                spawn("flood-" + t, () -> {
                    while (!stopping) {
                        int i = next.getAndIncrement();
                        inputs.incrementAndGet();
                        boolean bad = i % 2 == 1;
                        // malformed: 256 addresses (127.0.20.1 .. 127.0.21.2); flood: 8 /24s of 200 addresses
                        String local = bad ? address(20 + (i / 2 % 256 + 1) / 255, (i / 2 % 256 + 1) % 255)
                                : address(10 + i / 2 % 8, 2 + i / 16 % 200);
                        try (Socket s = RawIwarp.connect(serve, local, 2000)) {
                            if (bad) {
                                malformed.incrementAndGet();
                                s.getOutputStream().write(GARBAGE);
                                s.setSoTimeout(500);
                                s.getInputStream().read();
                            } else {
                                RawIwarp.startup(s, 1, 1, false);
                            }
                        } catch (IOException e) {
                            // refused, reset or timed out: the next one
                        }
                    }
                });
            }
            sleep(cfg.seconds * 1000L);
        }

        @Override
        String figures() {
            return "malformed=" + malformed.get();
        }

        @Override
        List<String> finish() throws InterruptedException {
            stopThreads();
            return List.of();
        }
    }
}
