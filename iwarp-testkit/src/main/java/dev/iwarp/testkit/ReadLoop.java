package dev.iwarp.testkit;

import dev.iwarp.framing.DirectReadAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelHandler;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;

import java.util.function.IntSupplier;

/**
 * Netty's read loop played by hand over an {@link EmbeddedChannel} whose receive-buffer allocator is a
 * {@link DirectReadAllocator} (over Netty's adaptive one): each read allocates what the allocator hands out
 * (a destination a framing named, a buffer sized to the next header, or an ordinary guess), takes as many
 * octets of the stream as it has room for (at most what the socket holds, and what the test lets one read
 * return), reports them to the handle and fires them into the pipeline, as the kernel and Netty would.
 */
public final class ReadLoop {
    private final DirectReadAllocator allocator;
    private final RecvByteBufAllocator.ExtendedHandle handle;

    @SuppressWarnings("deprecation") // a Netty 4.2 allocator hands out its handle as the deprecated Handle type
    private ReadLoop(DirectReadAllocator allocator) {
        this.allocator = allocator;
        this.handle = (RecvByteBufAllocator.ExtendedHandle) allocator.newHandle();
    }

    /** Sets a new {@link DirectReadAllocator} as {@code ch}'s allocator (before the framer is added), read with it. */
    public static ReadLoop on(EmbeddedChannel ch) {
        DirectReadAllocator a = new DirectReadAllocator(new AdaptiveRecvByteBufAllocator());
        ch.config().setRecvByteBufAllocator(a);
        return new ReadLoop(a);
    }

    /**
     * Sets a new {@link DirectReadAllocator} as {@code ch}'s allocator, then adds {@code framer} to its pipeline
     * (which the test then tells to read directly with {@link #allocator}), read with it.
     */
    public static ReadLoop on(EmbeddedChannel ch, ChannelHandler framer) {
        ReadLoop reads = on(ch);
        ch.pipeline().addLast(framer);
        return reads;
    }

    /** The channel's allocator: the one the framer is told to read directly with. */
    public DirectReadAllocator allocator() {
        return allocator;
    }

    /** The next read's buffer, as Netty's read loop allocates it. */
    @SuppressWarnings("deprecation")
    public ByteBuf allocate() {
        return handle.allocate(ByteBufAllocator.DEFAULT);
    }

    /** Tells the handle a read returned {@code n} octets (a test that fills {@link #allocate}'s buffer itself). */
    public void lastBytesRead(int n) {
        handle.lastBytesRead(n);
    }

    /**
     * Reads the stream's octets {@code [at, available)} (what the socket holds) into {@code ch}; returns the new
     * {@code at}.
     */
    public int readAll(EmbeddedChannel ch, byte[] wire, int at, int available) {
        return readAll(ch, wire, at, available, () -> Integer.MAX_VALUE);
    }

    /**
     * As {@link #readAll(EmbeddedChannel, byte[], int, int)}, each read returning at most {@code maxRead} octets
     * (asked anew per read: a slow or emulated peer's segments).
     */
    @SuppressWarnings("deprecation")
    public int readAll(EmbeddedChannel ch, byte[] wire, int at, int available, IntSupplier maxRead) {
        while (at < available) {
            ByteBuf b = handle.allocate(ByteBufAllocator.DEFAULT);
            int n = Math.min(Math.min(b.writableBytes(), available - at), maxRead.getAsInt());
            b.writeBytes(wire, at, n);
            handle.lastBytesRead(n);
            at += n;
            ch.writeInbound(b);
        }
        return at;
    }
}
