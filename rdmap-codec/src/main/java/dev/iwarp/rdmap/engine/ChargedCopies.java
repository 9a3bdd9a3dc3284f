package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.FreeList;
import dev.iwarp.ddp.MemoryAccount;
import dev.iwarp.rdmap.RdmapError;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.verbs.MemoryBudget;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.util.concurrent.Executor;

/**
 * Where the per-segment copies of a stream's Read Responses come from when its domain draws from a
 * {@link MemoryBudget} (CRC on: each segment carries its own copy, RFC 5044 §4.4): each copy is charged to the
 * requesting peer's account when it is made and given back when it is freed, that is once the socket took it or
 * the connection closed with it still queued. A peer that asks for Reads and stops reading makes the stack hold
 * these copies (up to the write-buffer high-water mark): they are memory committed on its behalf like its regions.
 *
 * <p>The copy is made inside the transmit loop, where it cannot be refused without leaving half a segment: when the
 * account refuses it, the copy is still made (uncharged: at most what the transmit loop writes before the next
 * task, bounded by the high-water mark) and the stream ends right after with Terminate 0/0/0xFF (RFC 5040 §7.2
 * Local Catastrophic Error), as every budget refusal does; the other peers go on. Event loop only.
 *
 * <p>A charged copy is a {@link ChargedCopy}: its charge is given back at its last release, whoever makes it (a slice
 * the MPA framer took of it shares its reference count), and the object is then kept for the next copy, so that a
 * stream serving Reads makes no object per segment once warm (the copy's memory comes from the channel's allocator).
 */
final class ChargedCopies extends AbstractByteBufAllocator {
    /**
     * Released copies kept for reuse at most: 16 Read Responses of four segments each in flight at once (serve's
     * default IRD, 64 KiB at a 16 KiB MULPDU); a deeper queue makes one object per copy beyond, as before. An idle
     * stream keeps at most these small objects (no copy memory: that goes back to the allocator at each release).
     */
    static final int MAX_KEPT = 64;
    private final FreeList<ChargedCopy> free = new FreeList<>(MAX_KEPT);
    /** The thread copies are made on (the stream's event loop): only a release there keeps the object. */
    private volatile Thread thread;
    private final StreamLifecycle lifecycle;
    private final Executor eventLoop;
    private final ByteBufAllocator alloc;
    private final MemoryAccount account;
    private boolean refused;

    private ChargedCopies(StreamLifecycle lifecycle, Executor eventLoop, ByteBufAllocator alloc,
            MemoryAccount account) {
        super(true);
        this.lifecycle = lifecycle;
        this.eventLoop = eventLoop;
        this.alloc = alloc;
        this.account = account;
    }

    /**
     * The allocator for a stream's response copies, charged to {@code account}: {@code alloc} itself when the
     * domain has no budget. A refusal ends the stream through {@code lifecycle}, in a task of {@code eventLoop}.
     */
    static ByteBufAllocator of(MemoryAccount account, StreamLifecycle lifecycle, Executor eventLoop,
            ByteBufAllocator alloc) {
        return account == MemoryAccount.UNLIMITED ? alloc : new ChargedCopies(lifecycle, eventLoop, alloc, account);
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
        ByteBuf copy = alloc.directBuffer(initialCapacity, maxCapacity);
        boolean charged = account instanceof MemoryBudget.Account a
                ? a.tryReserve(initialCapacity, MemoryBudget.Use.READ_RESPONSE_COPIES)
                : account.tryReserve(initialCapacity);
        if (charged) {
            Thread t = Thread.currentThread();
            if (thread != t) {
                thread = t;
            }
            ChargedCopy c = free.poll();
            if (c == null) {
                c = new ChargedCopy(this);
            }
            return c.wrap(copy, account, initialCapacity);
        }
        if (!refused) {
            refused = true;
            int octets = initialCapacity;
            // after the transmit loop that asked: terminating inside it would drop the message being copied
            eventLoop.execute(() -> lifecycle.terminate(TerminateCause.of(RdmapError.LOCAL_CATASTROPHIC),
                    null, null, "memory budget spent: no budget for a copy of " + octets
                            + " octets of a Read Response"));
        }
        return copy;
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
        return newDirectBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public boolean isDirectBufferPooled() {
        return alloc.isDirectBufferPooled();
    }

    /** {@code c}'s last reference was released (its charge given back): kept, when that happened on the loop. */
    void released(ChargedCopy c) {
        if (Thread.currentThread() == thread) {
            free.offer(c);
        }
    }
}
