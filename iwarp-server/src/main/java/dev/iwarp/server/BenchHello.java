package dev.iwarp.server;

import io.netty.buffer.ByteBuf;

import java.nio.charset.StandardCharsets;

/**
 * The 32-octet Send by which {@code bench --op send} asks {@code serve} for enough posted receives to pipeline,
 * and serve's answer. perftest's server learns the size and receive depth from its own command line; serve learns
 * them from this message, so one serve answers clients of any depth with receives sized to their Sends.
 *
 * <pre>
 *  0..15  "iwarp-bench-recv" (request) or "iwarp-bench-okay" (answer), US-ASCII
 * 16..19  Send size in octets, big-endian
 * 20..23  receives wanted (request) or posted (answer), big-endian
 * 24..31  zero
 * </pre>
 *
 * serve without {@code --echo} answers a request with the receives it posted (at most {@link #MAX_DEPTH}, and at
 * most {@link #MAX_RING_OCTETS} octets of them); with {@code --echo}, or an older serve, the request is echoed and
 * the client runs at depth 1. Any other Send keeps its meaning (16 octets: an rping advertisement; else an echo).
 */
final class BenchHello {
    static final int LENGTH = 32;
    /** Most receives serve posts for one connection. */
    static final int MAX_DEPTH = 128;
    /** Most octets of receive buffers serve allocates for one connection's pipelined Sends (spare slots included). */
    static final int MAX_RING_OCTETS = 1 << 20;

    private static final byte[] REQUEST = "iwarp-bench-recv".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ANSWER = "iwarp-bench-okay".getBytes(StandardCharsets.US_ASCII);

    private BenchHello() {
    }

    static void writeRequest(ByteBuf buf, int index, int size, int depth) {
        write(buf, index, REQUEST, size, depth);
    }

    static void writeAnswer(ByteBuf buf, int index, int size, int depth) {
        write(buf, index, ANSWER, size, depth);
    }

    private static void write(ByteBuf buf, int index, byte[] magic, int size, int depth) {
        buf.setBytes(index, magic);
        buf.setInt(index + 16, size);
        buf.setInt(index + 20, depth);
        buf.setLong(index + 24, 0);
    }

    static boolean isRequest(ByteBuf buf, int index, int length) {
        return length == LENGTH && matches(buf, index, REQUEST);
    }

    static boolean isAnswer(ByteBuf buf, int index, int length) {
        return length == LENGTH && matches(buf, index, ANSWER);
    }

    private static boolean matches(ByteBuf buf, int index, byte[] magic) {
        for (int i = 0; i < magic.length; i++) {
            if (buf.getByte(index + i) != magic[i]) {
                return false;
            }
        }
        return true;
    }

    static int size(ByteBuf buf, int index) {
        return buf.getInt(index + 16);
    }

    static int depth(ByteBuf buf, int index) {
        return buf.getInt(index + 20);
    }

    /** The receives serve grants for Sends of {@code size} octets when {@code wanted} are asked for (0: none). */
    static int grant(int size, int wanted) {
        if (size < 1 || size > RpingSession.BUFFER_SIZE || wanted < 1) {
            return 0;
        }
        // two ring slots per granted receive (RpingSession posts a receive's replacement before its echo)
        return Math.min(Math.min(wanted, MAX_DEPTH), Math.max(1, MAX_RING_OCTETS / (2 * Math.max(size, 16))));
    }
}
