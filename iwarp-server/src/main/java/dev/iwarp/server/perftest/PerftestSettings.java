package dev.iwarp.server.perftest;

import dev.iwarp.bootstrap.tls.TlsSettings;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * One run's options, as perftest's: {@code address} is the peer (client) or the address to bind (server).
 *
 * @param durationSec 0: run {@code iterations}; otherwise run that long (write/read bandwidth, read latency)
 * @param all         every size from 2 to 2^23 ({@code -a}); then {@code size} only sets nothing
 */
public record PerftestSettings(PerftestTest test, boolean client, InetSocketAddress address, int size,
                               long iterations, int durationSec, boolean all, int txDepth, int rxDepth, int qps,
                               int outReads, boolean reportGbits, long timeoutMs, TlsSettings tls) {

    /** The message sizes of this run. */
    public List<Integer> sizes() {
        List<Integer> s = new ArrayList<>();
        if (all) {
            for (int v = 2; v <= PerftestTest.MAX_ALL_SIZE; v <<= 1) {
                s.add(v);
            }
        } else {
            s.add(size);
        }
        return s;
    }

    /** The largest message. */
    public int maxSize() {
        return all ? PerftestTest.MAX_ALL_SIZE : size;
    }
}
