package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaDevice;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One host for engine tests without any framing: a software device, a PD, CQs, and an
 * {@code EmbeddedChannel} of [{@link FakeLlpStream}, {@code DdpCodec}, {@link RdmaEngine}].
 * The lower layer records every DDP segment the engine writes (headers, and short payloads), so tests can
 * assert the exact Terminate on the wire.
 */
final class EngineSide {
    final RdmaDevice device;
    final ProtectionDomain pd;
    private final boolean ownsDevice;
    final CompletionQueue sendCq = new CompletionQueue();
    final CompletionQueue recvCq = new CompletionQueue();
    final RdmaEngine engine;
    final QueuePair qp;
    final FakeLlpStream llp = new FakeLlpStream();
    final List<Recorded> written = new ArrayList<>();
    final EmbeddedChannel ch;
    final LlpRole role;
    private final List<ByteBuf> allocated = new ArrayList<>();
    private int readsBetween;

    EngineSide(LlpRole role) {
        this(role, null);
    }

    /** A side on {@code shared} (closed by its owner), in a PD of its own; a new device if {@code null}. */
    EngineSide(LlpRole role, RdmaDevice shared) {
        this(role, shared, false);
    }

    /**
     * As {@link #EngineSide(LlpRole, RdmaDevice)}; with {@code inboundBetween} an inbound handler sits between
     * the codec and the engine (it must see no ULPDU: they reach the engine through the lower layer).
     */
    EngineSide(LlpRole role, RdmaDevice shared, boolean inboundBetween) {
        this.role = role;
        this.ownsDevice = shared == null;
        this.device = shared == null ? new RdmaDevice() : shared;
        this.pd = device.allocPd();
        engine = new RdmaEngine(pd, sendCq, recvCq);
        qp = engine.queuePair();
        llp.tap = segment -> written.add(new Recorded(segment));
        ch = inboundBetween
                ? new EmbeddedChannel(llp, new DdpCodec(), new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        readsBetween++;
                        ctx.fireChannelRead(msg);
                    }
                }, engine)
                : new EmbeddedChannel(llp, new DdpCodec(), engine);
    }

    /** Whether no ULPDU passed through the pipeline above the lower layer: all went to the engine's receiver. */
    boolean headersReadInPlace() {
        return readsBetween == 0;
    }

    /** Parameters as a framing would report them: version 1, IRD/ORD 4, no RTR, MULPDU from the fake. */
    LlpParameters.Builder parameters() {
        return LlpParameters.builder("fake", role, llp, "fake framing").ird(4).ord(4);
    }

    /** Enters RTS with {@code p}. */
    void establish(LlpParameters p) {
        llp.establish(p);
        ch.runPendingTasks();
    }

    /** A pooled buffer of {@code size} octets filled with {@code fill}, released at {@link #close()}. */
    ByteBuf buffer(int size, int fill) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        byte[] content = new byte[size];
        Arrays.fill(content, (byte) fill);
        b.writeBytes(content); // one access: the paranoid leak detector records every access
        allocated.add(b);
        return b;
    }

    MemoryRegion register(ByteBuf memory, Access... access) {
        return pd.register(memory, access);
    }

    Recorded lastWritten() {
        return written.isEmpty() ? null : written.get(written.size() - 1);
    }

    /** Everything the engine sent down, as ULPDU buffers (the caller releases them). */
    List<ByteBuf> drainUlpdus() {
        List<ByteBuf> out = new ArrayList<>();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            out.add((ByteBuf) o);
        }
        return out;
    }

    void close() {
        ch.finishAndReleaseAll();
        if (ownsDevice) {
            device.close();
        }
        allocated.forEach(ByteBuf::release);
        allocated.clear();
    }

    /** What the engine wrote: the DDP header fields and a copy of a short payload. */
    static final class Recorded {
        final boolean tagged;
        final boolean last;
        final int rsvdUlp;
        final byte[] header;
        final byte[] payload;
        final int payloadLength;

        Recorded(DdpSegment s) {
            tagged = s.isTagged();
            last = s.isLast();
            rsvdUlp = s.rsvdUlp();
            ByteBuf h = PooledByteBufAllocator.DEFAULT.heapBuffer(18);
            s.encodeHeader(h);
            header = new byte[h.readableBytes()];
            h.readBytes(header);
            h.release();
            payloadLength = s.payloadLength();
            if (payloadLength <= 256) {
                payload = new byte[payloadLength];
                s.content().getBytes(s.content().readerIndex(), payload);
            } else {
                payload = null;
            }
        }

        int opcode() {
            return rsvdUlp & 0x0F;
        }

        int ddpVersion() {
            return header[0] & 0x03;
        }
    }
}
