package dev.iwarp.server;

import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * How {@code bench} learns what {@code serve} spent: a 32-octet Send on a connection of its own asks serve's
 * process for its CPU time and the octets its threads allocated so far, and serve answers with a 40-octet
 * Send. bench asks right before and right after its measured phase; the difference over the messages
 * measured is serve's cost per message, for the whole process (event loops, JIT compiler, GC).
 *
 * <pre>
 * request  0..15 "iwarp-bench-cost" (US-ASCII), 16..31 zero
 * answer   0..15 "iwarp-bench-used", 16..23 process CPU nanoseconds, 24..31 octets allocated by its threads
 *          (-1: not measurable), 32..39 zero; big-endian
 * </pre>
 *
 * The question travels on a fresh connection whose first Send it is (serve's one posted receive): on a
 * connection whose Sends serve echoes from a ring (after a {@link BenchHello}) it would be echoed, as it is by
 * a serve from before this message: bench then reports the server's cost as not measured.
 */
final class BenchCost {
    static final int REQUEST_LENGTH = 32;
    static final int ANSWER_LENGTH = 40;

    private static final byte[] REQUEST = "iwarp-bench-cost".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ANSWER = "iwarp-bench-used".getBytes(StandardCharsets.US_ASCII);

    /** One process's counters: CPU nanoseconds and octets allocated (-1: not measurable). */
    record Snapshot(long cpuNanos, long allocatedBytes) {
        static final Snapshot UNKNOWN = new Snapshot(-1, -1);

        /** The counters of this process now. */
        static Snapshot ofThisProcess() {
            long cpu = -1;
            if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
                cpu = os.getProcessCpuTime();
            }
            long alloc = -1;
            if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
                    && t.isThreadAllocatedMemorySupported() && t.isThreadAllocatedMemoryEnabled()) {
                alloc = 0;
                for (long a : t.getThreadAllocatedBytes(t.getAllThreadIds())) {
                    alloc += Math.max(0, a); // a thread that ended meanwhile: -1
                }
            }
            return new Snapshot(cpu, alloc);
        }

        /** {@code later} minus this, per field; -1 where either is unknown. */
        Snapshot until(Snapshot later) {
            return new Snapshot(cpuNanos < 0 || later.cpuNanos < 0 ? -1 : later.cpuNanos - cpuNanos,
                    allocatedBytes < 0 || later.allocatedBytes < 0 ? -1 : later.allocatedBytes - allocatedBytes);
        }
    }

    private BenchCost() {
    }

    static boolean isRequest(ByteBuf buf, int index, int length) {
        return length == REQUEST_LENGTH && matches(buf, index, REQUEST);
    }

    static void writeRequest(ByteBuf buf, int index) {
        buf.setBytes(index, REQUEST);
        buf.setZero(index + 16, 16);
    }

    static void writeAnswer(ByteBuf buf, int index, Snapshot s) {
        buf.setBytes(index, ANSWER);
        buf.setLong(index + 16, s.cpuNanos());
        buf.setLong(index + 24, s.allocatedBytes());
        buf.setLong(index + 32, 0);
    }

    /** The answer's counters, or {@link Snapshot#UNKNOWN} when it is not one (an older serve's echo). */
    static Snapshot readAnswer(ByteBuf buf, int index, int length) {
        if (length != ANSWER_LENGTH || !matches(buf, index, ANSWER)) {
            return Snapshot.UNKNOWN;
        }
        return new Snapshot(buf.getLong(index + 16), buf.getLong(index + 24));
    }

    private static boolean matches(ByteBuf buf, int index, byte[] magic) {
        for (int i = 0; i < magic.length; i++) {
            if (buf.getByte(index + i) != magic[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Asks the serve at {@code server} for its counters on a connection of its own; {@link Snapshot#UNKNOWN} when
     * it does not answer with them within {@code timeoutMs} (not a failure of the run).
     */
    static Snapshot ask(ClientWire wire, InetSocketAddress server, boolean crc, long timeoutMs) {
        WireDomain domain = wire.allocDomain();
        ByteBuf memory = PooledByteBufAllocator.DEFAULT.directBuffer(REQUEST_LENGTH + 64);
        memory.setZero(0, memory.capacity());
        WireRegion region = domain.register(memory, WireAccess.LOCAL_WRITE);
        CompletableFuture<Integer> answered = new CompletableFuture<>();
        WireConnection conn = null;
        try {
            conn = wire.connect(server, domain, crc, 1, (wrId, receive, success, length, status) -> {
                if (receive) {
                    if (success) {
                        answered.complete(length);
                    } else {
                        answered.completeExceptionally(new IllegalStateException(String.valueOf(status)));
                    }
                }
            }, c -> c.postRecv(1, region, REQUEST_LENGTH, 64), timeoutMs);
            writeRequest(memory, 0);
            conn.postSend(2, region, 0, REQUEST_LENGTH);
            int length = answered.get(timeoutMs, TimeUnit.MILLISECONDS);
            return readAnswer(memory, REQUEST_LENGTH, length);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return Snapshot.UNKNOWN;
        } finally {
            if (conn != null) {
                conn.channel().close().awaitUninterruptibly(timeoutMs);
            }
            region.deregister();
            memory.release();
        }
    }
}
