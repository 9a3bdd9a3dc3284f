package dev.iwarp.verbs;

import io.netty.util.concurrent.FastThreadLocal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A completion queue (libibverbs ibv_cq): completions are added on the connection's event loop and
 * read from any thread by {@link #poll()}, {@link #take(long, TimeUnit)} or a listener. Thread-safe.
 *
 * <p>A {@linkplain #setListener listener} gets a new {@link Completion} per completion, which it may
 * keep. A {@linkplain #setReusingListener reusing listener} gets one object per event loop thread,
 * refilled for each call: successful completions then cost no allocation, as a poll into
 * an array the caller reuses does with libibverbs.
 */
public final class CompletionQueue {
    /** The object refilled for reusing listeners, one per event loop thread (a CQ may serve many loops). */
    private static final FastThreadLocal<Refilled> REFILLED = new FastThreadLocal<>() {
        @Override
        protected Refilled initialValue() {
            return new Refilled();
        }
    };
    /**
     * Created by the first completion queued or the first {@link #take}: with a listener it is never
     * needed, and with its two locks it was 230 octets of every idle connection.
     */
    private volatile LinkedBlockingQueue<Completion> queue;
    /** Null (the queue), a {@link CompletionListener} or a {@link ReusingCompletionListener}. */
    private volatile Object listener;

    /**
     * Routes completions to {@code listener} instead of the queue (on the event loop; it must not
     * block); {@code null} routes them to the queue again. Completions already queued stay there.
     */
    public void setListener(CompletionListener listener) {
        this.listener = listener;
    }

    /**
     * As {@link #setListener}, but {@code listener} gets one object, refilled for each call and valid
     * only during it ({@link CompletionView#toCompletion()} keeps one). A completion added while the
     * listener is still handling an earlier one on the same thread (a post that fails at once) comes as
     * its own {@link Completion}.
     */
    public void setReusingListener(ReusingCompletionListener listener) {
        this.listener = listener;
    }

    void add(Completion c) {
        Object l = listener;
        if (l instanceof ReusingCompletionListener) {
            ((ReusingCompletionListener) l).onCompletion(c);
        } else if (l != null) {
            ((CompletionListener) l).onCompletion(c);
        } else {
            queue().add(c);
        }
    }

    private LinkedBlockingQueue<Completion> queue() {
        LinkedBlockingQueue<Completion> q = queue;
        if (q == null) {
            synchronized (this) {
                q = queue;
                if (q == null) {
                    queue = q = new LinkedBlockingQueue<>();
                }
            }
        }
        return q;
    }

    /** A successful send-queue completion. */
    void addSuccess(long wrId, WcOpcode opcode, int byteLength, long immediateData) {
        addSuccess(wrId, opcode, byteLength, false, 0, immediateData, false);
    }

    /** A successful completion: refilled for a reusing listener, otherwise a new {@link Completion}. */
    void addSuccess(long wrId, WcOpcode opcode, int byteLength, boolean invalidated, int invalidatedStag,
                    long immediateData, boolean solicited) {
        Object l = listener;
        if (l instanceof ReusingCompletionListener) {
            Refilled r = REFILLED.get();
            if (!r.inUse) {
                r.fill(wrId, opcode, byteLength, invalidated, invalidatedStag, immediateData, solicited);
                r.inUse = true;
                try {
                    ((ReusingCompletionListener) l).onCompletion(r);
                } finally {
                    r.inUse = false;
                }
                return;
            }
        }
        add(Completion.success(wrId, opcode, byteLength, invalidated, invalidatedStag, immediateData, solicited));
    }

    /** The oldest completion, or {@code null} when none is queued. */
    public Completion poll() {
        LinkedBlockingQueue<Completion> q = queue;
        return q == null ? null : q.poll();
    }

    /** Up to {@code max} queued completions, oldest first. */
    public List<Completion> poll(int max) {
        List<Completion> out = new ArrayList<>(Math.min(max, 64));
        LinkedBlockingQueue<Completion> q = queue;
        if (q != null) {
            q.drainTo(out, max);
        }
        return out;
    }

    /** Waits up to the timeout for a completion; {@code null} on timeout. */
    public Completion take(long timeout, TimeUnit unit) throws InterruptedException {
        return queue().poll(timeout, unit);
    }

    /** Completions currently queued. */
    public int size() {
        LinkedBlockingQueue<Completion> q = queue;
        return q == null ? 0 : q.size();
    }

    /** The successful completion a reusing listener is handed; refilled per call. */
    private static final class Refilled implements CompletionView {
        boolean inUse;
        private long wrId;
        private WcOpcode opcode;
        private int byteLength;
        private boolean invalidated;
        private int invalidatedStag;
        private long immediateData;
        private boolean solicited;

        void fill(long wrId, WcOpcode opcode, int byteLength, boolean invalidated, int invalidatedStag,
                  long immediateData, boolean solicited) {
            this.wrId = wrId;
            this.opcode = opcode;
            this.byteLength = byteLength;
            this.invalidated = invalidated;
            this.invalidatedStag = invalidatedStag;
            this.immediateData = immediateData;
            this.solicited = solicited;
        }

        @Override
        public long wrId() {
            return wrId;
        }

        @Override
        public WcStatus status() {
            return WcStatus.SUCCESS;
        }

        @Override
        public WcOpcode opcode() {
            return opcode;
        }

        @Override
        public int byteLength() {
            return byteLength;
        }

        @Override
        public boolean hasInvalidatedStag() {
            return invalidated;
        }

        @Override
        public int invalidatedStag() {
            return invalidatedStag;
        }

        @Override
        public long immediateData() {
            return immediateData;
        }

        @Override
        public boolean solicited() {
            return solicited;
        }

        @Override
        public String detail() {
            return null;
        }

        @Override
        public Completion toCompletion() {
            return Completion.success(wrId, opcode, byteLength, invalidated, invalidatedStag, immediateData, solicited);
        }

        @Override
        public String toString() {
            return toCompletion().toString();
        }
    }
}
