package dev.iwarp.framing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * A channel's receive-buffer allocator through which a framing's reader (MPA's framer, for one) says what the next socket read goes
 * into: the memory a payload is placed in (so the kernel copies the octets straight into a registered
 * region, once, as siw places from the socket buffer), or a buffer of exactly the octets up to the next
 * framed unit's DDP header (so that a large payload behind it is not read into an ordinary buffer first). Otherwise
 * it is the allocator it wraps. Netty's read loop allocates, reads and fires {@code channelRead} before it
 * allocates again, so an answer given while decoding holds for the very next read.
 *
 * <p>One instance per channel, set before the channel's first read (Netty keeps the handle it made then);
 * the framer finds it in the channel's configuration. Confined to the channel's event loop.
 */
public final class DirectReadAllocator implements RecvByteBufAllocator {
    private final RecvByteBufAllocator delegate;
    /** The buffer the next read goes into, while it has room; the framer owns it. */
    private ByteBuf destination;
    /** Octets the next ordinary read may take at most (0: as the wrapped allocator guesses). */
    private int nextReadLength;
    /** Octets socket reads placed straight into destinations. */
    private long octetsReadDirectly;
    /** Socket reads that returned octets. */
    private long socketReads;
    /** Socket reads that found the socket empty (each a system call too). */
    private long emptyReads;

    public DirectReadAllocator(RecvByteBufAllocator delegate) {
        if (delegate instanceof DirectReadAllocator) {
            delegate = ((DirectReadAllocator) delegate).delegate;
        }
        this.delegate = delegate;
    }

    /**
     * The allocator of {@code channel}, installed around the one it has unless it is one already; call before the
     * channel's first read (Netty keeps the handle it made then).
     */
    public static DirectReadAllocator installOn(io.netty.channel.Channel channel) {
        io.netty.channel.ChannelConfig config = channel.config();
        if (config.getRecvByteBufAllocator() instanceof DirectReadAllocator d) {
            return d;
        }
        DirectReadAllocator d = new DirectReadAllocator(config.getRecvByteBufAllocator());
        config.setRecvByteBufAllocator(d);
        return d;
    }

    /** Reads go into {@code buf} (retained for each read) while it is writable; null to stop. */
    public void readInto(ByteBuf buf) {
        destination = buf;
    }

    /** The next ordinary read takes at most {@code length} octets (0: no limit); once. */
    public void limitNextRead(int length) {
        nextReadLength = length;
    }

    /** Octets the socket reads of this channel placed straight into payload destinations, so far. */
    public long octetsReadDirectly() {
        return octetsReadDirectly;
    }

    /** Socket reads of this channel that returned octets, so far (each one system call). */
    public long socketReads() {
        return socketReads;
    }

    /**
     * Socket reads of this channel that found nothing to read, so far (each one system call, not counted by
     * {@link #socketReads}): Netty's read loop reads again after a read that filled its buffer exactly.
     */
    public long emptyReads() {
        return emptyReads;
    }

    @Override
    @SuppressWarnings("deprecation") // Netty 4.2 still declares newHandle() with the deprecated Handle type
    public Handle newHandle() {
        return new DirectHandle((ExtendedHandle) delegate.newHandle());
    }

    private final class DirectHandle implements ExtendedHandle {
        private final ExtendedHandle handle;
        private boolean intoDestination;

        DirectHandle(ExtendedHandle handle) {
            this.handle = handle;
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            ByteBuf d = destination;
            intoDestination = d != null && d.isWritable();
            if (intoDestination) {
                return d.retain();
            }
            int n = nextReadLength;
            if (n > 0) {
                nextReadLength = 0;
                return alloc.ioBuffer(n, n); // capacity n exactly: epoll reads up to the capacity
            }
            return handle.allocate(alloc);
        }

        @Override
        public int guess() {
            return handle.guess();
        }

        @Override
        public void reset(io.netty.channel.ChannelConfig config) {
            handle.reset(config);
        }

        @Override
        public void incMessagesRead(int numMessages) {
            handle.incMessagesRead(numMessages);
        }

        @Override
        public void lastBytesRead(int bytes) {
            if (bytes > 0) {
                socketReads++;
                if (intoDestination) {
                    octetsReadDirectly += bytes;
                }
            } else if (bytes == 0) {
                emptyReads++;
            }
            intoDestination = false;
            handle.lastBytesRead(bytes);
        }

        @Override
        public int lastBytesRead() {
            return handle.lastBytesRead();
        }

        @Override
        public void attemptedBytesRead(int bytes) {
            handle.attemptedBytesRead(bytes);
        }

        @Override
        public int attemptedBytesRead() {
            return handle.attemptedBytesRead();
        }

        @Override
        public boolean continueReading() {
            return handle.continueReading();
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return handle.continueReading(maybeMoreDataSupplier);
        }

        @Override
        public void readComplete() {
            handle.readComplete();
        }
    }
}
