package dev.iwarp.server;

import java.io.PrintWriter;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Samples a byte counter every 250 ms: keeps the peak rate and, when given a terminal, rewrites one
 * progress line ({@code \r}) with the current rate and total.
 */
final class Meter {
    static final long INTERVAL_MS = 250;

    private final AtomicLong bytes;
    private final PrintWriter terminal;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile double peakGbit;

    Meter(AtomicLong bytes, PrintWriter terminal) {
        this.bytes = bytes;
        this.terminal = terminal;
        this.thread = new Thread(this::sample, "bench-meter");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    private void sample() {
        long last = bytes.get();
        long lastAt = System.nanoTime();
        while (running) {
            try {
                Thread.sleep(INTERVAL_MS);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            long b = bytes.get();
            double gbit = (b - last) * 8.0 / Math.max(1, now - lastAt);
            if (gbit > peakGbit) {
                peakGbit = gbit;
            }
            if (terminal != null) {
                terminal.printf("\r  %.3f Gbit/s, %d octets so far   ", gbit, b);
                terminal.flush();
            }
            last = b;
            lastAt = now;
        }
    }

    /** Stops sampling (and ends the progress line). */
    void stop() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join();
        if (terminal != null) {
            terminal.println();
        }
    }

    /** Highest rate over one full interval; 0 when the run was shorter than one interval. */
    double peakGbitPerSecond() {
        return peakGbit;
    }
}
