package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.security.SecureRandom;
import java.util.Objects;
import java.util.Random;
import java.util.function.IntFunction;

/**
 * The Data Sink's STag → tagged buffer map (RFC 5041 §5.1, §8). Registration,
 * invalidation and deregistration may run on any thread; lookups and {@link #check} are lock-free
 * and meant for event loops.
 *
 * <p>STag layout (verbs convention, as Linux siw): {@code index << 8 | key}. Both parts are drawn at
 * random for every registration (RFC 5042: STags must be hard to guess, so not sequential): the
 * 24-bit index uniformly from the free indices in 1..0xFFFFFF (never 0, so STag 0 is never handed
 * out; an index in use is drawn again, so no two live STags share one), the 8-bit key uniformly, so a
 * stale STag of a reused index fails. Lookups compare all 32 bits.
 *
 * <p>No oracle (RFC 5042): an STag of another protection domain is answered exactly like an STag
 * that does not exist ({@link #check}), so a peer learns nothing about other streams' memory by
 * probing.
 */
public final class TaggedBufferTable {
    /** Largest STag index. */
    public static final int MAX_INDEX = 0xFFFFFF;

    /** By STag index; a primitive map: a lookup allocates nothing (no boxed key). */
    private final StagIndexMap buffers = new StagIndexMap();
    private final Random random;
    private final Object allocationLock = new Object();

    /** A table with STag indices and keys from a {@link SecureRandom} (STags hard to guess, RFC 5042). */
    public TaggedBufferTable() {
        this(new SecureRandom());
    }

    /** A table drawing indices and keys from {@code random} (tests: a seeded one). */
    public TaggedBufferTable(Random random) {
        this.random = Objects.requireNonNull(random, "random");
    }

    /**
     * Registers the readable octets of {@code memory} as a tagged buffer whose first octet has TO
     * {@code baseTo}. Ownership: the table takes its own reference (a retained slice, released by
     * {@link #deregister}); the caller keeps and releases its reference as before.
     *
     * @param protectionDomain the PD; {@link #check} compares it by identity
     * @param accessFlags      {@link AccessFlags} bits
     * @param remoteInvalidate whether the peer may invalidate the STag (Send with Invalidate)
     * @throws IllegalArgumentException if the region would run past TO 2<sup>64</sup>−1
     * @throws IllegalStateException    if all 2<sup>24</sup>−1 indices are in use
     */
    public TaggedBuffer register(Object protectionDomain, ByteBuf memory, long baseTo, int accessFlags,
                                 boolean remoteInvalidate) {
        Objects.requireNonNull(protectionDomain, "protectionDomain");
        int length = memory.readableBytes();
        checkRange(baseTo, length);
        ByteBuf own = memory.retainedSlice();
        try {
            return add(stag -> new TaggedBuffer(stag, protectionDomain, own, baseTo, accessFlags, remoteInvalidate));
        } catch (RuntimeException e) {
            own.release();
            throw e;
        }
    }

    /**
     * Registers an on-demand tagged buffer of {@code length} octets whose first octet has TO {@code baseTo}: it
     * holds no memory until it is first placed into, read or asked for its memory, when {@code allocator} gives
     * it a zeroed direct buffer; {@link TaggedBuffer#discard()} gives that back (the octets read as zeros again),
     * {@link #deregister} gives it back for good. For regions that a peer may use but most never do (a server's
     * per-connection target): idle, such a registration costs no buffer memory.
     *
     * @throws IllegalArgumentException if {@code length} is negative or the region would run past TO 2<sup>64</sup>−1
     * @throws IllegalStateException    if all 2<sup>24</sup>−1 indices are in use
     */
    public TaggedBuffer registerOnDemand(Object protectionDomain, int length, ByteBufAllocator allocator, long baseTo,
                                        int accessFlags, boolean remoteInvalidate) {
        return registerOnDemand(protectionDomain, length, allocator, MemoryAccount.UNLIMITED, baseTo, accessFlags,
                remoteInvalidate);
    }

    /**
     * As {@link #registerOnDemand(Object, int, ByteBufAllocator, long, int, boolean)}, its memory reserved from
     * {@code account} when allocated (a refusal is a {@link MemoryRefusedException} where the memory was needed)
     * and released when given back.
     */
    public TaggedBuffer registerOnDemand(Object protectionDomain, int length, ByteBufAllocator allocator,
                                        MemoryAccount account, long baseTo, int accessFlags, boolean remoteInvalidate) {
        Objects.requireNonNull(account, "account");
        Objects.requireNonNull(protectionDomain, "protectionDomain");
        Objects.requireNonNull(allocator, "allocator");
        if (length < 0) {
            throw new IllegalArgumentException("length " + length);
        }
        checkRange(baseTo, length);
        return add(stag -> new TaggedBuffer(stag, protectionDomain, null, allocator, account, length, baseTo,
                accessFlags, remoteInvalidate));
    }

    private static void checkRange(long baseTo, int length) {
        if (length > 0 && Long.compareUnsigned(baseTo + length - 1, baseTo) < 0) {
            throw new IllegalArgumentException(String.format("region [0x%016x, +%d) wraps past 2^64-1", baseTo, length));
        }
    }

    /** Draws a free index and a key (RFC 5042: hard to guess) and adds the buffer made for that STag. */
    private TaggedBuffer add(IntFunction<TaggedBuffer> withStag) {
        synchronized (allocationLock) {
            if (buffers.size() >= MAX_INDEX) {
                throw new IllegalStateException("no free STag index");
            }
            // up to 64 random draws; should all hit indices in use (a nearly full table), the next free
            // index after the last draw, so that allocation stays bounded
            int index = 1 + random.nextInt(MAX_INDEX);
            for (int draws = 1; buffers.containsKey(index) && draws < 64; draws++) {
                index = 1 + random.nextInt(MAX_INDEX);
            }
            for (int tries = 0; tries < MAX_INDEX; tries++) {
                if (buffers.containsKey(index)) {
                    index = index == MAX_INDEX ? 1 : index + 1;
                    continue;
                }
                TaggedBuffer buffer = withStag.apply(index << 8 | random.nextInt(256));
                buffers.put(buffer);
                return buffer;
            }
        }
        throw new IllegalStateException("no free STag index");
    }

    /** The buffer registered under exactly this STag (index and key), valid or not; {@code null} if none. */
    public TaggedBuffer lookup(int stag) {
        TaggedBuffer b = buffers.get(stag >>> 8);
        return b != null && b.stag() == stag ? b : null;
    }

    /**
     * Validates an access of {@code length} octets at {@code to} (RFC 5041 §7.1), in this
     * order, returning the first failure:
     * <ol>
     *   <li>{@link TaggedAccessResult#INVALID_STAG}: no buffer under this STag (index or key differ), it
     *       was invalidated, or it was registered in another PD than {@code protectionDomain}. RFC 5041
     *       has a code for the last case ("STag not associated"), but using it would tell a peer that
     *       the STag is live on another stream (RFC 5042: no probing of other streams' STags), so a
     *       foreign STag gets the same answer as one that does not exist;</li>
     *   <li>{@link TaggedAccessResult#ACCESS_RIGHTS}: some {@code requiredAccess} flag not granted;</li>
     *   <li>{@link TaggedAccessResult#BASE_OR_BOUNDS}: {@code TO < base} or
     *       {@code TO + length > base + buffer length}, both sides in unsigned 64-bit arithmetic
     *       (an end that lands exactly on 2<sup>64</sup> counts as the top of the TO space);</li>
     *   <li>{@link TaggedAccessResult#TO_WRAP}: {@code TO + length} runs past 2<sup>64</sup>−1. Such an
     *       access wraps to a small end and so may pass step 4 (as in siw's arithmetic); this step
     *       catches it.</li>
     * </ol>
     * Zero-length accesses are not exempted: RDMAP decides whether to call this for them (the RFC 6581
     * RTR, RFC 5040 §5).
     */
    public TaggedAccessResult check(int stag, Object protectionDomain, long to, long length, int requiredAccess) {
        if (length < 0) {
            throw new IllegalArgumentException("length " + length);
        }
        TaggedBuffer b = lookup(stag);
        if (b == null || !b.isValid() || b.protectionDomain() != protectionDomain) {
            return TaggedAccessResult.INVALID_STAG;
        }
        if (!AccessFlags.allows(b.access(), requiredAccess)) {
            return TaggedAccessResult.ACCESS_RIGHTS;
        }
        long base = b.baseTo();
        // Compare last octets so that a region ending exactly at 2^64 works; for length 0 compare starts.
        boolean inBounds = Long.compareUnsigned(to, base) >= 0 && (length == 0
                ? Long.compareUnsigned(to - base, b.length()) <= 0
                : b.length() > 0 && Long.compareUnsigned(to + length - 1, base + b.length() - 1) <= 0);
        if (!inBounds) {
            return TaggedAccessResult.BASE_OR_BOUNDS;
        }
        if (length > 0 && Long.compareUnsigned(to + length - 1, to) < 0) {
            return TaggedAccessResult.TO_WRAP;
        }
        return TaggedAccessResult.OK;
    }

    /**
     * Invalidates the STag (local invalidate, or the peer's Send with Invalidate once RDMAP has checked
     * {@link TaggedBuffer#remoteInvalidate()}): later checks give INVALID_STAG. The buffer stays
     * registered until {@link #deregister}.
     *
     * @return whether the STag was registered and valid
     */
    public boolean invalidate(int stag) {
        TaggedBuffer b = lookup(stag);
        if (b == null || !b.isValid()) {
            return false;
        }
        b.invalidate();
        return true;
    }

    /**
     * The peer's Send with Invalidate (RFC 5040 §5.3): invalidates the STag only if it is registered,
     * valid, in {@code protectionDomain} (the stream's) and was registered for remote invalidation.
     * Every refusal is the same {@code false}, whatever the reason, so that the answer tells a peer
     * nothing about STags it may not invalidate (RFC 5042).
     *
     * @return whether the STag was invalidated
     */
    public boolean invalidateRemotely(int stag, Object protectionDomain) {
        TaggedBuffer b = lookup(stag);
        if (b == null || !b.isValid() || b.protectionDomain() != protectionDomain || !b.remoteInvalidate()) {
            return false;
        }
        b.invalidate();
        return true;
    }

    /**
     * Removes the STag, invalidates it and releases the table's reference to its memory (an on-demand
     * buffer's memory, if allocated, goes back to its allocator). Any slice a
     * caller obtained through {@link TaggedBuffer#read} stays usable until released.
     *
     * @return whether the STag was registered
     */
    public boolean deregister(int stag) {
        TaggedBuffer b = lookup(stag);
        if (b == null) {
            return false;
        }
        synchronized (allocationLock) {
            if (!buffers.remove(b)) {
                return false;
            }
        }
        b.invalidate();
        b.release();
        return true;
    }

    /** Registered STags, valid or not. */
    public int size() {
        return buffers.size();
    }
}
