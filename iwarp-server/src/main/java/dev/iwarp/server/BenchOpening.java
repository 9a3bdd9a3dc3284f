package dev.iwarp.server;

import dev.iwarp.server.wire.ClientWire;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** How {@link Bench} opens its connections and plans which part of the target region each one uses. */
final class BenchOpening {
    /** Connections set up at once (each blocks a thread until established). */
    private static final int PARALLEL_CONNECTS = 8;

    private BenchOpening() {
    }

    /** Opens the connections, up to {@link #PARALLEL_CONNECTS} at a time; on a failure the rest are closed too. */
    static void openAll(ClientWire wire, InetSocketAddress server, BenchSettings s, List<BenchConnection> open)
            throws IOException, InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(s.connections(), PARALLEL_CONNECTS), r -> {
            Thread t = new Thread(r, "bench-connect");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<BenchConnection>> pending = new ArrayList<>();
            for (int i = 0; i < s.connections(); i++) {
                int index = i;
                pending.add(pool.submit(() -> BenchConnection.open(wire, server, index, s)));
            }
            IOException first = null;
            for (Future<BenchConnection> f : pending) {
                try {
                    open.add(f.get());
                } catch (ExecutionException e) {
                    if (first == null) {
                        first = e.getCause() instanceof IOException io ? io : new IOException(e.getCause().getMessage(),
                                e.getCause());
                    }
                }
            }
            if (first != null) {
                throw first;
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Plans each connection's part of the region it was advertised (its own part when verifying). */
    static void plan(BenchSettings s, List<BenchConnection> open) throws IOException {
        // connections given the same region share it: with verify each gets its own part
        Map<String, List<BenchConnection>> regions = new LinkedHashMap<>();
        for (BenchConnection c : open) {
            String key = s.op() == Bench.Op.send ? "" : Advertisement.decode(c.connection().peerData()).toString();
            regions.computeIfAbsent(key, k -> new ArrayList<>()).add(c);
        }
        for (List<BenchConnection> group : regions.values()) {
            long size = s.op() == Bench.Op.send ? 0 : Advertisement.decode(group.get(0).connection().peerData())
                    .sizeUnsigned();
            long share = s.verify() ? size / group.size() : size;
            for (int k = 0; k < group.size(); k++) {
                group.get(k).plan(s.verify() ? k * share : 0, share);
            }
        }
    }
}
