package dev.iwarp.ddp;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * STag index → {@link TaggedBuffer}, for {@link TaggedBufferTable}: open addressing on the buffers
 * themselves (a slot's key is its buffer's {@code stag() >>> 8}), so a lookup boxes nothing and
 * allocates nothing. Lookups are lock-free and may run on any thread; changes are serialized by the
 * caller's lock. Like {@code ConcurrentHashMap}, a lookup racing a change sees the map before or after it.
 */
final class StagIndexMap {
    /** Marks a removed entry so that probe chains stay intact; never a registered buffer. */
    private static final TaggedBuffer REMOVED = new TaggedBuffer(0, new Object(), io.netty.buffer.Unpooled.EMPTY_BUFFER,
            0, 0, false);
    private static final int MIN_CAPACITY = 16;

    private volatile AtomicReferenceArray<TaggedBuffer> slots = new AtomicReferenceArray<>(MIN_CAPACITY);
    private volatile int size;
    /** Slots not null: live entries and REMOVED markers. */
    private int used;

    private static int home(int index, int mask) {
        return (index * 0x9E3779B9) >>> 7 & mask; // Fibonacci hashing: consecutive indices spread out
    }

    /** The buffer whose STag index is {@code index}, or {@code null}. */
    TaggedBuffer get(int index) {
        AtomicReferenceArray<TaggedBuffer> s = slots;
        int mask = s.length() - 1;
        for (int i = home(index, mask), n = 0; n <= mask; i = (i + 1) & mask, n++) {
            TaggedBuffer b = s.get(i);
            if (b == null) {
                return null;
            }
            if (b != REMOVED && b.stag() >>> 8 == index) {
                return b;
            }
        }
        return null;
    }

    boolean containsKey(int index) {
        return get(index) != null;
    }

    /** Adds {@code buffer} under its STag index, which must be absent. Caller holds the lock. */
    void put(TaggedBuffer buffer) {
        if ((used + 1) * 2 > slots.length()) {
            rehash(size + 1);
        }
        AtomicReferenceArray<TaggedBuffer> s = slots;
        int mask = s.length() - 1;
        int i = home(buffer.stag() >>> 8, mask);
        while (s.get(i) != null && s.get(i) != REMOVED) {
            i = (i + 1) & mask;
        }
        if (s.get(i) == null) {
            used++;
        }
        s.set(i, buffer);
        size++;
    }

    /** Removes {@code buffer} if it is the entry under its index. Caller holds the lock. */
    boolean remove(TaggedBuffer buffer) {
        AtomicReferenceArray<TaggedBuffer> s = slots;
        int mask = s.length() - 1;
        int index = buffer.stag() >>> 8;
        for (int i = home(index, mask), n = 0; n <= mask; i = (i + 1) & mask, n++) {
            TaggedBuffer b = s.get(i);
            if (b == null) {
                return false;
            }
            if (b == buffer) {
                s.set(i, REMOVED);
                size--;
                return true;
            }
        }
        return false;
    }

    int size() {
        return size;
    }

    /** A new array with room for {@code live} entries at most half full, without REMOVED markers. */
    private void rehash(int live) {
        int capacity = MIN_CAPACITY;
        while (capacity < live * 4) {
            capacity <<= 1;
        }
        AtomicReferenceArray<TaggedBuffer> old = slots;
        AtomicReferenceArray<TaggedBuffer> s = new AtomicReferenceArray<>(capacity);
        int mask = capacity - 1;
        for (int k = 0; k < old.length(); k++) {
            TaggedBuffer b = old.get(k);
            if (b != null && b != REMOVED) {
                int i = home(b.stag() >>> 8, mask);
                while (s.get(i) != null) {
                    i = (i + 1) & mask;
                }
                s.set(i, b);
            }
        }
        used = size;
        slots = s; // volatile publish: lookups see the old or the new array, each complete
    }
}
