package dev.iwarp.server;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A count one thread adds to (an event loop, per message or per pass) and any thread reads. Published with a
 * release store and read with an acquire load: on x86 the add is a plain store, where a volatile store is a fenced
 * one and a shared {@link java.util.concurrent.atomic.LongAdder} an atomic add.
 */
final class SingleWriterCounter {
    private static final VarHandle VALUE;

    static {
        try {
            VALUE = MethodHandles.lookup().findVarHandle(SingleWriterCounter.class, "value", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private long value;

    /** Adds {@code n}; only ever from the one writing thread. */
    void add(long n) {
        VALUE.setRelease(this, value + n);
    }

    /** The count; from any thread. */
    long get() {
        return (long) VALUE.getAcquire(this);
    }
}
