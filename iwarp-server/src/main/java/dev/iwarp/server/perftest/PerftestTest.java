package dev.iwarp.server.perftest;

/** The six perftest tests: their command name, title line, operation and defaults. */
public enum PerftestTest {
    WRITE_BW("ib_write_bw", "RDMA_Write BW Test", Op.WRITE, true, 65536, 5000),
    READ_BW("ib_read_bw", "RDMA_Read BW Test", Op.READ, true, 65536, 1000),
    SEND_BW("ib_send_bw", "Send BW Test", Op.SEND, true, 65536, 1000),
    WRITE_LAT("ib_write_lat", "RDMA_Write Latency Test", Op.WRITE, false, 2, 1000),
    READ_LAT("ib_read_lat", "RDMA_Read Latency Test", Op.READ, false, 2, 1000),
    SEND_LAT("ib_send_lat", "Send Latency Test", Op.SEND, false, 2, 1000);

    /** The RDMA operation a test measures. */
    public enum Op { WRITE, READ, SEND }

    /** Largest message of {@code -a} (2^23), as perftest. */
    public static final int MAX_ALL_SIZE = 1 << 23;

    private final String command;
    private final String title;
    private final Op op;
    private final boolean bandwidth;
    private final int defaultSize;
    private final int defaultIterations;

    PerftestTest(String command, String title, Op op, boolean bandwidth, int defaultSize, int defaultIterations) {
        this.command = command;
        this.title = title;
        this.op = op;
        this.bandwidth = bandwidth;
        this.defaultSize = defaultSize;
        this.defaultIterations = defaultIterations;
    }

    public String command() {
        return command;
    }

    public String title() {
        return title;
    }

    public Op op() {
        return op;
    }

    public boolean bandwidth() {
        return bandwidth;
    }

    public int defaultSize() {
        return defaultSize;
    }

    public int defaultIterations() {
        return defaultIterations;
    }

    /** perftest's default tx depth: 128 for bandwidth tests (clipped to the iterations), 1 for latency tests. */
    public int defaultTxDepth(long iterations) {
        return bandwidth ? (int) Math.min(128, iterations) : 1;
    }

    /** perftest's receive depth: min(512, iterations), rounded up to even. */
    public static int defaultRxDepth(long iterations) {
        int d = (int) Math.min(512, iterations);
        return d + (d & 1);
    }

    /**
     * Whether the data (RDMA Writes, Read Responses or Sends) runs before the post-traffic dest exchange (the
     * passive-server bandwidth tests) rather than after the last dest exchange (send_bw and the latency tests).
     */
    boolean trafficBeforeLastSync() {
        return this == WRITE_BW || this == READ_BW;
    }

    /** Control Sends per direction with one QP and one size: 16, 11, or 10 (write_lat). */
    public int controlSends() {
        return switch (this) {
            case WRITE_BW, READ_BW -> 16;
            case WRITE_LAT -> 10;
            default -> 11;
        };
    }
}
