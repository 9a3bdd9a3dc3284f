package dev.iwarp.server;

import java.io.PrintWriter;
import java.util.function.LongSupplier;

/**
 * Samples {@code bench}'s octet counter every {@link #INTERVAL_MS}: keeps the peak rate and, given a writer
 * (stderr), prints one progress line per second, whether or not it is a terminal.
 */
final class Meter {
    static final long INTERVAL_MS = 250;
    private static final int SAMPLES_PER_LINE = 4;

    private final LongSupplier bytes;
    private final PrintWriter progress;
    private final int messageSize;
    private final Thread thread;
    private final long startedAt = System.nanoTime();
    private volatile boolean running = true;
    private volatile double peakBytesPerSecond;

    Meter(LongSupplier bytes, PrintWriter progress, int messageSize) {
        this.bytes = bytes;
        this.progress = progress;
        this.messageSize = messageSize;
        this.thread = new Thread(this::sample, "bench-meter");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    private void sample() {
        long last = bytes.getAsLong();
        long lastAt = System.nanoTime();
        long lineBytes = last;
        long lineAt = lastAt;
        for (int n = 1; running; n++) {
            try {
                Thread.sleep(INTERVAL_MS);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            long b = bytes.getAsLong();
            double rate = (b - last) * 1e9 / Math.max(1, now - lastAt);
            if (rate > peakBytesPerSecond) {
                peakBytesPerSecond = rate;
            }
            last = b;
            lastAt = now;
            if (progress != null && n % SAMPLES_PER_LINE == 0) {
                double lineRate = (b - lineBytes) * 1e9 / Math.max(1, now - lineAt);
                progress.printf("bench: %3.0f s  %10.2f MB/sec  %8.6f Mpps  %d iterations%n", (now - startedAt) / 1e9,
                        lineRate / (1 << 20), lineRate / messageSize / 1e6, b / messageSize);
                progress.flush();
                lineBytes = b;
                lineAt = now;
            }
        }
    }

    /** Stops sampling. */
    void stop() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join();
    }

    /** Highest rate over one full interval, octets per second; 0 when the run was shorter than one interval. */
    double peakBytesPerSecond() {
        return peakBytesPerSecond;
    }
}
