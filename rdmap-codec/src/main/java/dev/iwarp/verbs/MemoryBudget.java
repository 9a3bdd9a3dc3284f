package dev.iwarp.verbs;

import dev.iwarp.ddp.MemoryAccount;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A budget of memory committed on peers' behalf (RFC 5042 §5: a peer must not be able to exhaust the resources of
 * the node it talks to): regions registered on demand reserve their length from it when a peer's message first
 * needs their memory, and release it when it is given back; a ULP reserves what it commits for a peer through the
 * same {@link Account} ({@code serve}: a bench client's receive ring). Set on a device
 * ({@link RdmaDevice#setMemoryBudget}), every protection domain allocated afterwards has its own account, so a
 * refusal falls on the peer whose domain asked: its stream ends with a Terminate (RDMAP Local Catastrophic Error)
 * and the others go on.
 *
 * <p>Headroom for new sessions: an account that holds at most {@code newSessionAllowance} octets may reserve up to
 * the limit; one that holds more may reserve only up to {@code limit - headroom}. The peers that hold the most cannot
 * spend the last {@code headroom} octets, so a session that starts while they fill the budget still gets its first
 * buffers. Thread-safe; a reservation is one compare-and-set.
 */
public final class MemoryBudget {
    /** What a reservation is for, to count refusals by cause. */
    public enum Use {
        /** Memory placed into: regions registered on demand, a ULP's receive buffers. */
        PLACEMENT("memory to place into"),
        /** Per-segment copies of Read Responses queued towards the peer (CRC on). */
        READ_RESPONSE_COPIES("Read Response copies");

        private final String description;

        Use(String description) {
            this.description = description;
        }

        /** What it is, in a few words, for a log line. */
        public String description() {
            return description;
        }
    }

    private final long limit;
    private final long headroom;
    private final long newSessionAllowance;
    private final AtomicLong committed = new AtomicLong();
    private final AtomicLong refusals = new AtomicLong();
    private final AtomicLongArray refusalsByUse = new AtomicLongArray(Use.values().length);

    private MemoryBudget(long limit, long headroom, long newSessionAllowance) {
        if (limit <= 0 || headroom < 0 || headroom > limit || newSessionAllowance < 0) {
            throw new IllegalArgumentException("memory budget " + limit + ", headroom " + headroom
                    + ", new-session allowance " + newSessionAllowance);
        }
        this.limit = limit;
        this.headroom = headroom;
        this.newSessionAllowance = newSessionAllowance;
    }

    /**
     * A budget of {@code limit} octets whose last {@code headroom} octets only accounts holding at most
     * {@code newSessionAllowance} octets may spend.
     */
    public static MemoryBudget of(long limit, long headroom, long newSessionAllowance) {
        return new MemoryBudget(limit, headroom, newSessionAllowance);
    }

    /** A budget of {@code limit} octets without headroom. */
    public static MemoryBudget of(long limit) {
        return new MemoryBudget(limit, 0, 0);
    }

    /** A new account, e.g. one per protection domain (one per connection in {@code serve}). */
    public Account newAccount() {
        return new Account();
    }

    public long limit() {
        return limit;
    }

    public long headroom() {
        return headroom;
    }

    public long newSessionAllowance() {
        return newSessionAllowance;
    }

    /** Octets reserved now, over all accounts. */
    public long committed() {
        return committed.get();
    }

    /** Reservations refused so far. */
    public long refusals() {
        return refusals.get();
    }

    /** Reservations for {@code use} refused so far. */
    public long refusals(Use use) {
        return refusalsByUse.get(use.ordinal());
    }

    private boolean reserve(long octets, long ceiling, Use use) {
        long c;
        do {
            c = committed.get();
            if (octets > ceiling - c) {
                refusalsByUse.incrementAndGet(use.ordinal());
                refusals.incrementAndGet();
                return false;
            }
        } while (!committed.compareAndSet(c, c + octets));
        return true;
    }

    @Override
    public String toString() {
        return committed() + " of " + limit + " octets committed (" + headroom + " kept for new sessions)";
    }

    /** What one peer (one protection domain) holds of the budget. */
    public final class Account implements MemoryAccount {
        private final AtomicLong held = new AtomicLong();

        private Account() {
        }

        @Override
        public boolean tryReserve(long octets) {
            return tryReserve(octets, Use.PLACEMENT);
        }

        /** As {@link #tryReserve(long)}, a refusal counted for {@code use}. */
        public boolean tryReserve(long octets, Use use) {
            if (octets < 0) {
                throw new IllegalArgumentException("octets " + octets);
            }
            long h = held.addAndGet(octets); // counted first: two threads of one account cannot both use headroom
            long ceiling = h <= newSessionAllowance ? limit : limit - headroom;
            if (!reserve(octets, ceiling, use)) {
                held.addAndGet(-octets);
                return false;
            }
            return true;
        }

        @Override
        public void release(long octets) {
            held.addAndGet(-octets);
            committed.addAndGet(-octets);
        }

        /** Octets this account holds. */
        public long held() {
            return held.get();
        }

        /** The budget it draws from. */
        public MemoryBudget budget() {
            return MemoryBudget.this;
        }
    }
}
