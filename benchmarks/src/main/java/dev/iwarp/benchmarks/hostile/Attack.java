package dev.iwarp.benchmarks.hostile;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One attack of the hostile-load suite: {@link #start} builds up the pressure and returns once it is on (the
 * legitimate ping and the measurement follow while it lasts); {@link #finish} waits for what the attack checks
 * itself (a connection serve should have closed, a socket it should have dropped), stops, and returns the bounds
 * that failed, each saying which bound and by how much.
 */
abstract class Attack {
    final HostileLoad cfg;
    final InetSocketAddress serve;
    /** What the attacker sent that serve had to handle (advertisements, connections, Reads, handshakes). */
    final AtomicLong inputs = new AtomicLong();
    /** Octets the attacker sent and received, for amplification figures. */
    final AtomicLong octetsOut = new AtomicLong();
    final AtomicLong octetsIn = new AtomicLong();
    volatile boolean stopping;
    private final List<Thread> threads = new ArrayList<>();

    Attack(HostileLoad cfg) {
        this.cfg = cfg;
        this.serve = new InetSocketAddress(cfg.host, cfg.port);
    }

    /** The unit of {@link #inputs} (plural), for the CPU-per-input figure; null where that figure means nothing. */
    abstract String inputName();

    abstract void start() throws Exception;

    /** Extra figures for the report line (may be empty). */
    String figures() {
        return "";
    }

    /** Waits for the attack's own verdicts, stops everything, returns the failed bounds. */
    abstract List<String> finish() throws Exception;

    void spawn(String name, Runnable r) {
        Thread t = new Thread(() -> {
            try {
                r.run();
            } catch (RuntimeException e) {
                if (!stopping) {
                    System.out.println("hostile " + cfg.attack + ": " + name + " ended: " + e);
                }
            }
        }, name);
        t.setDaemon(true);
        threads.add(t);
        t.start();
    }

    void stopThreads() throws InterruptedException {
        stopping = true;
        for (Thread t : threads) {
            t.join(3000);
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** 127.0.{subnet}.{host}: one /24 per subnet, so limits keyed by prefix see one source. */
    static String address(int subnet, int host) {
        return "127.0." + subnet + "." + host;
    }
}
