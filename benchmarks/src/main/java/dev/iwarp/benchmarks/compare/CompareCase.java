package dev.iwarp.benchmarks.compare;

import dev.iwarp.bootstrap.Transport;

import java.util.ArrayList;
import java.util.List;

/**
 * One comparison: an operation, a message size, CRC on or off, a transport, a depth (or window), whether both
 * sides run inside TLS 1.3 (ours: MPA inside our TLS layer; raw: Netty's SslHandler over the same provider), and
 * how many connections each side runs it on at once ({@code compare --processes --connections}; depth is per
 * connection).
 */
record CompareCase(Op op, int size, boolean crc, Transport transport, int depth, boolean tls, int connections) {
    enum Op { WRITE, READ, PINGPONG, PIPELINE }

    CompareCase(Op op, int size, boolean crc, Transport transport, int depth) {
        this(op, size, crc, transport, depth, false);
    }

    CompareCase(Op op, int size, boolean crc, Transport transport, int depth, boolean tls) {
        this(op, size, crc, transport, depth, tls, 1);
    }

    /** The same case on {@code n} connections at once. */
    CompareCase onConnections(int n) {
        return new CompareCase(op, size, crc, transport, depth, tls, n);
    }

    /** Credit granularity of PIPELINE: the receiver returns a credit message every {@code depth / 2} messages. */
    int creditEvery() {
        return Math.max(1, depth / 2);
    }

    /** The depth of the standard Write and Read cases (ORD/IRD 16, serve's default); another depth is in the name. */
    static final int TABLE_DEPTH = 16;
    /** perftest's default send-queue depth, and siw's ORD/IRD limit: the depth of the 1 KiB {@code -d128} cases. */
    static final int PERFTEST_DEPTH = 128;

    String name() {
        String s = switch (op) {
            case WRITE -> "write";
            case READ -> "read";
            case PINGPONG -> "pingpong";
            case PIPELINE -> "pipeline";
        };
        boolean otherDepth = (op == Op.WRITE || op == Op.READ) && depth != TABLE_DEPTH;
        return s + "-" + sizeName(size) + (crc ? "-crc" : "-nocrc") + (tls ? "-tls" : "")
                + (otherDepth ? "-d" + depth : "") + (connections != 1 ? "-c" + connections : "") + "/"
                + transport.name().toLowerCase();
    }

    static String sizeName(int size) {
        if (size >= 1 << 20 && size % (1 << 20) == 0) {
            return (size >> 20) + "m";
        }
        if (size >= 1024 && size % 1024 == 0) {
            return (size >> 10) + "k";
        }
        return Integer.toString(size);
    }

    /**
     * The standard cases, on each transport: 64 KiB Write/Read CRC on/off, 64 B ping-pong and pipelined Sends,
     * 1 KiB and 1 MiB Write/Read; and 1 KiB Write/Read at depth 128, where depth 16 bounds what is in flight
     * to 16 KiB against the raw writer's 1 MiB.
     */
    static List<CompareCase> all(List<Transport> transports) {
        List<CompareCase> out = new ArrayList<>();
        for (Transport t : transports) {
            out.add(new CompareCase(Op.WRITE, 65536, true, t, TABLE_DEPTH));
            out.add(new CompareCase(Op.WRITE, 65536, false, t, TABLE_DEPTH));
            out.add(new CompareCase(Op.READ, 65536, true, t, TABLE_DEPTH));
            out.add(new CompareCase(Op.READ, 65536, false, t, TABLE_DEPTH));
            out.add(new CompareCase(Op.PINGPONG, 64, true, t, 1));
            out.add(new CompareCase(Op.PIPELINE, 64, true, t, 64));
            out.add(new CompareCase(Op.WRITE, 1024, true, t, TABLE_DEPTH));
            out.add(new CompareCase(Op.WRITE, 1 << 20, true, t, TABLE_DEPTH));
            out.add(new CompareCase(Op.READ, 1024, true, t, TABLE_DEPTH));
            out.add(new CompareCase(Op.READ, 1 << 20, true, t, TABLE_DEPTH));
            out.add(new CompareCase(Op.WRITE, 1024, true, t, PERFTEST_DEPTH));
            out.add(new CompareCase(Op.READ, 1024, true, t, PERFTEST_DEPTH));
            // the same stack inside TLS 1.3 (MPA CRC off: TLS authenticates every record), to set
            // against the plain cases above
            out.add(new CompareCase(Op.WRITE, 65536, false, t, TABLE_DEPTH, true));
            out.add(new CompareCase(Op.READ, 65536, false, t, TABLE_DEPTH, true));
            out.add(new CompareCase(Op.PINGPONG, 64, true, t, 1, true));
        }
        return out;
    }
}
