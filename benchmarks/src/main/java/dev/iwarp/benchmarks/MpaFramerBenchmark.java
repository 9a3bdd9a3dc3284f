package dev.iwarp.benchmarks;

import dev.iwarp.framing.UlpduSink;
import dev.iwarp.mpa.MpaFramer;
import dev.iwarp.mpa.MpaSettings;
import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.FastThreadLocalThread;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * MPA FPDU encode and decode through {@link MpaFramer}; one operation is one FPDU.
 *
 * <ul>
 *   <li>{@link #encode}: one ULPDU (a retained duplicate of a pre-filled pooled direct buffer, so the
 *       benchmark copies nothing) written through the framer's outbound side into a sink that
 *       releases every piece at once; no channel queue, no flush.</li>
 *   <li>{@link #decode}: one "read" of {@value #FPDUS_PER_READ} whole FPDUs, pre-encoded by the framer
 *       itself in {@link #setUp}, fired into the framer's inbound side; a sink releases every ULPDU.
 *       Each read is its own buffer from the channel's allocator (what a socket read hands the
 *       pipeline), retained and rewound per invocation: no copy, no derived buffer. The reads form a
 *       stream of at least 1 MiB replayed in order; markers depend on the stream position, so when the
 *       stream's length is not a multiple of 512 a fresh framer takes over at each wrap (once every
 *       {@value #MIN_READS} reads at most; its cost is included, amortised).</li>
 * </ul>
 *
 * <p>The framer allocates its header, trailer and marker buffers and (inbound, with markers inside a
 * ULPDU) its composite from the channel's allocator: {@code allocator} selects Netty 4.2's default
 * {@code adaptive} or the classic {@code pooled} one. The payload is always from
 * {@link PooledByteBufAllocator#DEFAULT}, whose duplicates are recycled, so the benchmark itself
 * allocates nothing per operation.
 *
 * <p>The benchmark threads are {@link FastThreadLocalThread}s ({@link EventLoopThreadExecutor}): Netty
 * 4.2 recycles {@code ByteBuf} objects and caches per thread only there, as on an event loop.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {
        "-Dio.netty.leakDetection.level=disabled",
        // Run on FastThreadLocalThreads like an event loop (see EventLoopThreadExecutor).
        "-Djmh.executor=CUSTOM",
        "-Djmh.executor.class=dev.iwarp.benchmarks.EventLoopThreadExecutor"})
public class MpaFramerBenchmark {
    /** FPDUs per decode invocation (one simulated read). */
    public static final int FPDUS_PER_READ = 64;
    /** The decode stream is at least this long ... */
    static final int MIN_STREAM_BYTES = 1 << 20;
    /** ... and at least this many reads. */
    static final int MIN_READS = 4;

    /** ULPDU octets; 64768 is the largest ULPDU MPA may send (RFC 5044 §3), "64 KiB" in the README. */
    @Param({"64", "1024", "64768"})
    public int size;

    /** Markers in both directions. */
    @Param({"false", "true"})
    public boolean markers;

    /** CRC32C generated and checked (try {@code -p crc=false}). */
    @Param({"true"})
    public boolean crc;

    /**
     * ULPDUs handed to a {@link UlpduSink} ({@code MpaFramer.receiveWith}, what the RDMA engine binds: each
     * ULPDU lent for the call, no object per FPDU) rather than passed up the pipeline as slices.
     */
    @Param({"false", "true"})
    public boolean sink;

    /** The channel's allocator, used by the framer: {@code adaptive} (Netty 4.2's default) or {@code pooled}. */
    @Param({"adaptive", "pooled"})
    public String allocator;

    private ByteBufAllocator alloc;
    private ByteBuf payload;

    private EmbeddedChannel txChannel;
    private OutboundSink txSink;
    private ChannelPromise txPromise;

    private EmbeddedChannel rxChannel;
    private ChannelPipeline rxPipeline;
    private InboundSink rxSink;
    private ByteBuf[] reads;
    private int nextRead;
    private boolean resetAtWrap;

    @Setup(Level.Trial)
    public void setUp() {
        if (!FastThreadLocalThread.currentThreadWillCleanupFastThreadLocals()) {
            throw new IllegalStateException("not on an event-loop-like thread (Netty 4.2 recycles buffers only"
                    + " there): keep -Djmh.executor=CUSTOM -Djmh.executor.class="
                    + EventLoopThreadExecutor.class.getName() + " when overriding -jvmArgsAppend");
        }
        switch (allocator) {
            case "adaptive":
                alloc = new AdaptiveByteBufAllocator();
                break;
            case "pooled":
                alloc = PooledByteBufAllocator.DEFAULT;
                break;
            default:
                throw new IllegalArgumentException("allocator must be adaptive or pooled: " + allocator);
        }
        if (size > MpaSettings.MAX_SEND_ULPDU) {
            throw new IllegalArgumentException("size " + size + " exceeds the largest sendable ULPDU "
                    + MpaSettings.MAX_SEND_ULPDU);
        }
        payload = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        for (int i = 0; i < size; i++) {
            payload.writeByte(i * 31 + 7);
        }
        setUpEncode();
        setUpDecode();
    }

    private MpaFramer newFramer() {
        return new MpaFramer(crc, markers, markers, 0xFFFF, MpaSettings.MAX_SEND_ULPDU, false);
    }

    /** A receiving framer: with {@link #sink}, its ULPDUs go to {@link #rxSink} directly. */
    private MpaFramer newReceiver() {
        MpaFramer f = newFramer();
        if (sink) {
            f.receiveWith(rxSink);
        }
        return f;
    }

    private void setUpEncode() {
        txSink = new OutboundSink();
        txChannel = new EmbeddedChannel();
        txChannel.config().setAllocator(alloc);
        // Outbound runs tail to head: framer, then the sink.
        txChannel.pipeline().addLast("sink", txSink).addLast("framer", newFramer());
        txPromise = txChannel.voidPromise();

        txChannel.write(payload.retainedDuplicate(), txPromise);
        txChannel.checkException();
        long expected = MpaFramer.wireLength(0, size, markers);
        if (txSink.bytes != expected) {
            throw new IllegalStateException("encode sent " + txSink.bytes + " octets, expected " + expected);
        }
    }

    private void setUpDecode() {
        // Encode the stream with the framer itself.
        EmbeddedChannel encoder = new EmbeddedChannel();
        CaptureSink capture = new CaptureSink();
        encoder.pipeline().addLast(capture, newFramer());
        int perRead = FPDUS_PER_READ * MpaFramer.wireLength(0, size, false);
        int readCount = Math.max(MIN_READS, (MIN_STREAM_BYTES + perRead - 1) / perRead);
        reads = new ByteBuf[readCount];
        long streamBytes = 0;
        for (int r = 0; r < readCount; r++) {
            for (int i = 0; i < FPDUS_PER_READ; i++) {
                encoder.write(payload.retainedDuplicate(), encoder.voidPromise());
            }
            ByteBuf bytes = capture.captured;
            reads[r] = alloc.directBuffer(bytes.readableBytes()).writeBytes(bytes);
            streamBytes += reads[r].readableBytes();
            bytes.clear();
        }
        encoder.checkException();
        encoder.finishAndReleaseAll();
        capture.captured.release();
        resetAtWrap = markers && (streamBytes & (MpaFramer.MARKER_INTERVAL - 1)) != 0;

        rxSink = new InboundSink();
        rxChannel = new EmbeddedChannel();
        rxChannel.config().setAllocator(alloc);
        rxPipeline = rxChannel.pipeline();
        rxPipeline.addLast("framer", newReceiver()).addLast("sink", rxSink);

        // One checked pass over the whole stream, twice to cover the wrap.
        rxSink.expected = payload;
        for (int pass = 0; pass < 2; pass++) {
            for (int r = 0; r < readCount; r++) {
                decode();
            }
        }
        rxSink.expected = null;
        rxChannel.checkException();
        if (rxSink.error != null) {
            throw new IllegalStateException("decode failed", rxSink.error);
        }
        long fpdus = 2L * readCount * FPDUS_PER_READ;
        if (rxSink.ulpdus != fpdus || rxSink.bytes != fpdus * size || nextRead != 0) {
            throw new IllegalStateException("decode delivered " + rxSink.ulpdus + " ULPDUs / " + rxSink.bytes
                    + " octets, expected " + fpdus + " / " + fpdus * size);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (rxSink.error != null) {
            throw new IllegalStateException("decode failed", rxSink.error);
        }
        txChannel.checkException();
        rxChannel.checkException();
        txChannel.finishAndReleaseAll();
        rxChannel.finishAndReleaseAll();
        for (ByteBuf read : reads) {
            read.release();
        }
        payload.release();
    }

    /** One FPDU out: header, ULPDU (or its pieces between markers), trailer. */
    @Benchmark
    public void encode() {
        txChannel.write(payload.retainedDuplicate(), txPromise);
    }

    /** One read of {@value #FPDUS_PER_READ} FPDUs in; the score is per FPDU. */
    @Benchmark
    @OperationsPerInvocation(FPDUS_PER_READ)
    public void decode() {
        ByteBuf read = reads[nextRead];
        read.retain().readerIndex(0); // the framer's cumulation releases it once fully read
        rxPipeline.fireChannelRead(read);
        if (++nextRead == reads.length) {
            nextRead = 0;
            if (resetAtWrap) {
                rxPipeline.replace("framer", "framer", newReceiver());
            }
        }
    }

    /** Releases whatever the framer writes; completes nothing (the framer's pieces carry void promises). */
    static final class OutboundSink extends ChannelOutboundHandlerAdapter {
        long bytes;

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            ByteBuf buf = (ByteBuf) msg;
            bytes += buf.readableBytes();
            buf.release();
            promise.trySuccess();
        }
    }

    /** Keeps the encoded octets (set-up only). */
    static final class CaptureSink extends ChannelOutboundHandlerAdapter {
        final ByteBuf captured = Unpooled.buffer();

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            ByteBuf buf = (ByteBuf) msg;
            captured.writeBytes(buf);
            buf.release();
            promise.trySuccess();
        }
    }

    /**
     * Takes every ULPDU, up the pipeline (and releases it) or lent as a {@link UlpduSink}; in set-up also
     * compares it with the payload. The payload is no DDP segment: asked for a destination, it wants the whole
     * ULPDU (each read here holds whole FPDUs anyway).
     */
    static final class InboundSink extends ChannelInboundHandlerAdapter implements UlpduSink {
        long ulpdus;
        long bytes;
        ByteBuf expected;
        Throwable error;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf ulpdu = (ByteBuf) msg;
            ulpdu(ulpdu);
            ulpdu.release();
        }

        @Override
        public void ulpdu(ByteBuf ulpdu) {
            ulpdus++;
            bytes += ulpdu.readableBytes();
            if (expected != null && !ByteBufUtil.equals(expected, ulpdu) && error == null) {
                error = new IllegalStateException("ULPDU #" + ulpdus + " differs from the payload");
            }
        }

        @Override
        public int headerLength(int firstOctet) {
            return 1;
        }

        @Override
        public ByteBuf payloadDestination(ByteBuf ulpdu, int headerLength, int payloadLength) {
            return null;
        }

        @Override
        public void placed() {
            throw new IllegalStateException("no destination was named");
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (error == null) {
                error = cause;
            }
        }
    }
}
