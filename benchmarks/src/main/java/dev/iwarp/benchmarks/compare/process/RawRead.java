package dev.iwarp.benchmarks.compare.process;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.util.Locale;
import java.util.function.BooleanSupplier;

/**
 * The raw Netty equivalent of an RDMA Read, for {@code compare}'s Read cases: request/response. The requester
 * sends a fixed {@value #REQUEST}-octet request naming a length, as an RDMA Read Request names its RDMA Read
 * Message Size (RFC 5040 §4.4: Sink STag, Sink Tagged Offset, RDMA Read Message Size, Source STag, Source Tagged
 * Offset: 28 octets); the responder answers each with that many octets, a retained duplicate of one pooled direct
 * buffer (no copy). At most {@code depth} requests are outstanding (the case's ORD, RFC 5040 §5.2); the requester
 * sends the next request as each response completes, one flush per read batch. The other baseline,
 * {@link Mode#STREAM}, is the one-way bulk stream of the Write cases run the other way.
 */
public final class RawRead {
    /** The request's length: an RDMA Read Request's header (RFC 5040 §4.4). */
    public static final int REQUEST = 28;
    /** Where the request names its length: the RDMA Read Message Size's offset in the Read Request header. */
    static final int LENGTH_OFFSET = 12;

    private RawRead() {
    }

    /** Which raw program a Read case runs ({@code compare --raw-read}). */
    public enum Mode {
        /**
         * Bulk writes while writable, the reading side counting octets: no round trip (one JVM: the Write program
         * itself; two processes: the peer writes to the client).
         */
        STREAM,
        /** 28-octet requests, at most depth outstanding, each answered with the length it names. */
        REQUEST_RESPONSE;

        public String cliName() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        public static Mode parse(String s) {
            for (Mode m : values()) {
                if (m.cliName().equals(s.trim().toLowerCase(Locale.ROOT))) {
                    return m;
                }
            }
            throw new IllegalArgumentException("--raw-read must be stream or request-response, not " + s);
        }
    }

    /**
     * One request naming {@code length} octets, the other fields zero, in a pooled direct buffer: the requester
     * sends retained duplicates of it, which the pool recycles (an unpooled buffer's duplicate is a new object).
     */
    public static ByteBuf request(int length) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(REQUEST).writeZero(REQUEST);
        return b.setInt(LENGTH_OFFSET, length);
    }

    /**
     * The requester: sends {@code depth} requests when {@link #start() started}, then one per completed response
     * while {@code stopped} is false; releases what it reads and counts it. The event loop is the only writer of
     * the counters; they are volatile for the measuring thread.
     */
    public static final class Requester extends ChannelInboundHandlerAdapter {
        private final int size;
        private final int depth;
        private final BooleanSupplier stopped;
        private ChannelHandlerContext ctx;
        private ByteBuf request;
        private volatile long sent;
        private volatile long receivedOctets;
        private int maxOutstanding;
        private boolean started;
        private boolean unflushed;

        public Requester(int size, int depth, BooleanSupplier stopped) {
            if (size <= 0 || depth <= 0) {
                throw new IllegalArgumentException("size and depth must be positive");
            }
            this.size = size;
            this.depth = depth;
            this.stopped = stopped;
        }

        /** Requests sent. */
        public long sent() {
            return sent;
        }

        /** Response octets received. */
        public long receivedOctets() {
            return receivedOctets;
        }

        /** Responses complete: a response completes with its last octet (responses arrive in request order). */
        public long completed() {
            return receivedOctets / size;
        }

        /** The most requests ever outstanding at once (sent, response not yet complete); on the event loop. */
        public int maxOutstanding() {
            return maxOutstanding;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
            request = request(size);
        }

        /**
         * Sends the first {@code depth} requests; on the event loop, once the channel is active (and after a TLS
         * handshake: traffic starts when ours does). Later calls do nothing.
         */
        public void start() {
            if (!started) {
                started = true;
                refill(ctx);
                flush(ctx);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            receivedOctets += b.readableBytes();
            b.release();
            refill(ctx);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            flush(ctx); // one flush per read batch
            ctx.fireChannelReadComplete();
        }

        /** Writes requests (unflushed) until {@code depth} are outstanding. */
        private void refill(ChannelHandlerContext ctx) {
            if (!started) {
                return;
            }
            long done = completed();
            long s = sent;
            while (s - done < depth && !stopped.getAsBoolean()) {
                ctx.write(request.retainedDuplicate(), ctx.voidPromise());
                s++;
                unflushed = true;
            }
            sent = s;
            maxOutstanding = (int) Math.max(maxOutstanding, s - done);
        }

        private void flush(ChannelHandlerContext ctx) {
            if (unflushed) {
                unflushed = false;
                ctx.flush();
            }
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            request.release();
        }
    }

    /**
     * The responder: answers each {@value #REQUEST}-octet request (requests may span reads) with the length it
     * names, at most {@code size}, as a retained slice of one pooled direct buffer of {@code size} octets (a
     * retained duplicate when the whole buffer is asked); one flush per read batch. Counts requests answered.
     */
    public static final class Responder extends ChannelInboundHandlerAdapter {
        private final ByteBuf response;
        private final ByteBuf partial = Unpooled.buffer(REQUEST, REQUEST); // a request split across reads
        private volatile long answered;
        private boolean unflushed;

        /** Answers from {@code response} (retained duplicates/slices; this handler keeps its own reference). */
        public Responder(ByteBuf response) {
            this.response = response;
        }

        /** Requests answered. */
        public long answered() {
            return answered;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            try {
                if (partial.isReadable()) {
                    int n = Math.min(partial.writableBytes(), in.readableBytes());
                    partial.writeBytes(in, n);
                    if (partial.isWritable()) {
                        return;
                    }
                    answer(ctx, partial.getInt(LENGTH_OFFSET));
                    partial.clear();
                }
                while (in.readableBytes() >= REQUEST) {
                    answer(ctx, in.getInt(in.readerIndex() + LENGTH_OFFSET));
                    in.skipBytes(REQUEST);
                }
                partial.writeBytes(in);
            } finally {
                in.release();
            }
        }

        private void answer(ChannelHandlerContext ctx, int length) {
            int capacity = response.readableBytes();
            if (length < 0 || length > capacity) {
                throw new IllegalArgumentException("a request for " + length + " octets; at most " + capacity);
            }
            ctx.write(length == capacity ? response.retainedDuplicate()
                    : response.retainedSlice(response.readerIndex(), length), ctx.voidPromise());
            answered++;
            unflushed = true;
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (unflushed) {
                unflushed = false;
                ctx.flush(); // one flush per read batch
            }
            ctx.fireChannelReadComplete();
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            response.release();
            partial.release();
        }
    }
}
