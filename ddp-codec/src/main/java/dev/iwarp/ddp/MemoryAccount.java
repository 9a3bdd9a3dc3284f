package dev.iwarp.ddp;

/**
 * Where memory committed on a peer's behalf is reserved before it is committed and given back after: an on-demand
 * tagged buffer reserves its length from its account when it gets memory and releases it when it gives the memory
 * back. The verbs' {@code MemoryBudget} hands out accounts; {@link #UNLIMITED} refuses nothing.
 */
public interface MemoryAccount {
    /** An account that refuses nothing and counts nothing. */
    MemoryAccount UNLIMITED = new MemoryAccount() {
        @Override
        public boolean tryReserve(long octets) {
            return true;
        }

        @Override
        public void release(long octets) {
        }
    };

    /** Reserves {@code octets} before committing them; {@code false}: refused, nothing reserved. Thread-safe. */
    boolean tryReserve(long octets);

    /** Gives back {@code octets} reserved earlier. Thread-safe. */
    void release(long octets);
}
