package dev.iwarp.benchmarks;

import dev.iwarp.ift.IftAdaptionIndication;
import dev.iwarp.ift.IftFlag;
import dev.iwarp.ift.IftFramer;
import dev.iwarp.ift.IftParameters;
import dev.iwarp.ift.IftRole;
import dev.iwarp.ift.IftSettings;
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
 * IFT frame encode and decode through {@link IftFramer}; one operation is one frame carrying one
 * tagged DDP segment (14-octet header, the rest payload), as an RDMA Write or Read Response would.
 *
 * <ul>
 *   <li>{@link #encode}: one ULPDU (a retained duplicate of a pre-filled pooled direct buffer: the
 *       benchmark copies nothing) written through the framer's outbound side into a sink that releases
 *       every piece at once; no channel queue, no flush.</li>
 *   <li>{@link #decode}: one "read" of {@value #FRAMES_PER_READ} whole frames, pre-encoded by a framer in
 *       {@link #setUp}, fired into the receiving framer; a sink releases every ULPDU. Each read is its
 *       own buffer from the channel's allocator, retained and rewound per invocation. The reads form a
 *       stream of at least 1 MiB replayed in order.</li>
 * </ul>
 *
 * <p>{@code crc} on means header and payload CRC sent (HC=PC=1) and checked. {@code allocator} is the
 * channel's, used by the framer for its head and trailer buffers and (inbound, with a header CRC) the
 * composite of header and payload slices. Threads are {@link FastThreadLocalThread}s
 * ({@link EventLoopThreadExecutor}), as on an event loop.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {
        "-Dio.netty.leakDetection.level=disabled",
        "-Djmh.executor=CUSTOM",
        "-Djmh.executor.class=dev.iwarp.benchmarks.EventLoopThreadExecutor"})
public class IftFramerBenchmark {
    /** Frames per decode invocation (one simulated read). */
    public static final int FRAMES_PER_READ = 64;
    static final int MIN_STREAM_BYTES = 1 << 20;
    static final int MIN_READS = 4;
    static final int TAGGED_HEADER = 14;

    /** ULPDU octets (DDP header + payload); 65535 is the largest IFT frame's ULPDU ("64 KiB"). */
    @Param({"64", "1024", "65535"})
    public int size;

    /** Header and payload CRC32C sent and checked (try {@code -p crc=false}). */
    @Param({"true"})
    public boolean crc;

    /** The channel's allocator: {@code adaptive} (Netty 4.2's default) or {@code pooled}. */
    @Param({"adaptive", "pooled"})
    public String allocator;

    private ByteBufAllocator alloc;
    private ByteBuf ulpdu;
    private IftParameters txParams;
    private IftParameters rxParams;

    private EmbeddedChannel txChannel;
    private OutboundSink txSink;
    private ChannelPromise txPromise;

    private EmbeddedChannel rxChannel;
    private ChannelPipeline rxPipeline;
    private InboundSink rxSink;
    private ByteBuf[] reads;
    private int nextRead;

    @Setup(Level.Trial)
    public void setUp() {
        if (!FastThreadLocalThread.currentThreadWillCleanupFastThreadLocals()) {
            throw new IllegalStateException("not on an event-loop-like thread: keep -Djmh.executor=CUSTOM"
                    + " -Djmh.executor.class=" + EventLoopThreadExecutor.class.getName());
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
        if (size < TAGGED_HEADER || size > IftSettings.MAX_ULPDU) {
            throw new IllegalArgumentException("size must be 14..65535: " + size);
        }
        ulpdu = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        ulpdu.writeByte(0xC1).writeByte(0x40); // tagged, last, DDP version 1; RDMA Write
        for (int i = 2; i < size; i++) {
            ulpdu.writeByte(i * 31 + 7);
        }
        // node A (VTag 0x1A2B) sends to node B (VTag 0xC3D4)
        IftAdaptionIndication a = IftAdaptionIndication.builder().flag(IftFlag.R, true).flag(IftFlag.HC, crc)
                .flag(IftFlag.PC, crc).senderVTag(0x1A2B).build();
        IftAdaptionIndication b = IftAdaptionIndication.builder().flag(IftFlag.PH, true).flag(IftFlag.R, true)
                .flag(IftFlag.HC, crc).flag(IftFlag.PC, crc).senderVTag(0xC3D4).build();
        txParams = IftParameters.of(IftRole.NODE_A, a, b, IftSettings.defaults());
        rxParams = IftParameters.of(IftRole.NODE_B, b, a, IftSettings.defaults());
        setUpEncode();
        setUpDecode();
    }

    private void setUpEncode() {
        txSink = new OutboundSink();
        txChannel = new EmbeddedChannel();
        txChannel.config().setAllocator(alloc);
        txChannel.pipeline().addLast("sink", txSink).addLast("framer", new IftFramer(txParams));
        txPromise = txChannel.voidPromise();
        txChannel.write(ulpdu.retainedDuplicate(), txPromise);
        txChannel.checkException();
        long expected = IftFramer.frameLength(TAGGED_HEADER, size - TAGGED_HEADER, crc, crc);
        if (txSink.bytes != expected) {
            throw new IllegalStateException("encode sent " + txSink.bytes + " octets, expected " + expected);
        }
    }

    private void setUpDecode() {
        EmbeddedChannel encoder = new EmbeddedChannel();
        CaptureSink capture = new CaptureSink();
        encoder.pipeline().addLast(capture, new IftFramer(txParams));
        int perRead = FRAMES_PER_READ * IftFramer.frameLength(TAGGED_HEADER, size - TAGGED_HEADER, crc, crc);
        int readCount = Math.max(MIN_READS, (MIN_STREAM_BYTES + perRead - 1) / perRead);
        reads = new ByteBuf[readCount];
        for (int r = 0; r < readCount; r++) {
            for (int i = 0; i < FRAMES_PER_READ; i++) {
                encoder.write(ulpdu.retainedDuplicate(), encoder.voidPromise());
            }
            ByteBuf bytes = capture.captured;
            reads[r] = alloc.directBuffer(bytes.readableBytes()).writeBytes(bytes);
            bytes.clear();
        }
        encoder.checkException();
        encoder.finishAndReleaseAll();
        capture.captured.release();

        rxSink = new InboundSink();
        rxChannel = new EmbeddedChannel();
        rxChannel.config().setAllocator(alloc);
        rxPipeline = rxChannel.pipeline();
        rxPipeline.addLast("framer", new IftFramer(rxParams)).addLast("sink", rxSink);

        rxSink.expected = ulpdu;
        for (int r = 0; r < readCount; r++) {
            decode();
        }
        rxSink.expected = null;
        rxChannel.checkException();
        if (rxSink.error != null) {
            throw new IllegalStateException("decode failed", rxSink.error);
        }
        long frames = (long) readCount * FRAMES_PER_READ;
        if (rxSink.ulpdus != frames || rxSink.bytes != frames * size || nextRead != 0) {
            throw new IllegalStateException("decode delivered " + rxSink.ulpdus + " ULPDUs / " + rxSink.bytes
                    + " octets, expected " + frames + " / " + frames * size);
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
        ulpdu.release();
    }

    /** One frame out: head (prefix, DDP header, header CRC), the payload itself, payload CRC. */
    @Benchmark
    public void encode() {
        txChannel.write(ulpdu.retainedDuplicate(), txPromise);
    }

    /** One read of {@value #FRAMES_PER_READ} frames in; the score is per frame. */
    @Benchmark
    @OperationsPerInvocation(FRAMES_PER_READ)
    public void decode() {
        ByteBuf read = reads[nextRead];
        read.retain().readerIndex(0); // the framer's cumulation releases it once fully read
        rxPipeline.fireChannelRead(read);
        if (++nextRead == reads.length) {
            nextRead = 0;
        }
    }

    /** Releases whatever the framer writes. */
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

    /** Releases every ULPDU; in set-up also compares it with the one sent. */
    static final class InboundSink extends ChannelInboundHandlerAdapter {
        long ulpdus;
        long bytes;
        ByteBuf expected;
        Throwable error;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf u = (ByteBuf) msg;
            ulpdus++;
            bytes += u.readableBytes();
            if (expected != null && !ByteBufUtil.equals(expected, u) && error == null) {
                error = new IllegalStateException("ULPDU #" + ulpdus + " differs from the one sent");
            }
            u.release();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (error == null) {
                error = cause;
            }
        }
    }
}
