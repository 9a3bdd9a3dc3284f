package dev.iwarp.server.wire;

/**
 * Immutable objects made for a key (a work request for a wrId, an SGE for a slot of a region), kept for the next
 * post of the same: bench and serve post the same few requests again and again, a bench ring one per slot. A
 * direct-mapped table of {@value #SIZE} entries (a ring has at most 256 slots): a key whose entry another key took
 * gets a new object, as before. The objects are immutable, so one made on another thread may be used again; a
 * race on an entry costs at most a new object.
 */
final class ReuseTable<T> {
    static final int SIZE = 256;
    private final Object[] entries = new Object[SIZE];

    /** The object kept under {@code key}'s entry, or null; the caller checks it is the one it wants. */
    @SuppressWarnings("unchecked")
    T get(long key) {
        return (T) entries[index(key)];
    }

    void put(long key, T value) {
        entries[index(key)] = value;
    }

    /** Consecutive keys (slots, wrIds of consecutive slots, also in the upper half) take different entries. */
    private static int index(long key) {
        return (int) (key ^ key >>> 32) & (SIZE - 1);
    }
}
