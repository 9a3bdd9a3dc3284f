package dev.iwarp.rdmap.engine;

import dev.iwarp.rdmap.engine.internal.WritePromise;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcStatus;
import dev.iwarp.ddp.FreeList;
import dev.iwarp.verbs.internal.VerbsAccess;
import io.netty.channel.ChannelPromise;

import java.util.ArrayDeque;

/**
 * The started requests of one send queue, whose completions leave in submission order (RFC 5040 §5.5:
 * a Write posted after a Read completes after it), and the per-request objects reused once a completion
 * left: the write promise of a Send, Write or Immediate Data, and the ORD slot of a Read or
 * atomic. A success whose turn it is leaves at once, as fields the completion queue hands a reusing
 * listener without a {@link Completion} object. Confined to the event loop.
 */
final class SubmissionOrder {
    private static final VerbsAccess VERBS = VerbsAccess.get();
    /** Objects of each kind kept for reuse at most (kept only once used: an idle stream holds none). */
    private static final int SPARE = 128; // a send queue 128 deep (perftest's default) allocates nothing once warm
    private final RdmapStream stream;
    /** Where the completions go, in submission order. */
    private final CompletionQueue sendCq;
    private final ArrayDeque<StartedRequest> started = new ArrayDeque<>(1); // grows as used: idle streams stay small
    /** ORD slots whose completion left, for the next Reads and atomics. */
    private final FreeList<Outstanding> spareSlots = new FreeList<>(SPARE);
    /** Write promises whose write was reported and whose completion left. */
    private final FreeList<Sent> spareSent = new FreeList<>(SPARE);

    SubmissionOrder(RdmapStream stream, CompletionQueue sendCq) {
        this.stream = stream;
        this.sendCq = sendCq;
    }

    /** A started Send, Write or Immediate Data: the promise its message's last write completes. */
    ChannelPromise startSent(SendRequest wr) {
        Sent p = spareSent.poll();
        return start(p != null ? p.rearm(wr) : new Sent(wr));
    }

    /** A started RDMA Read: its ORD slot. */
    Outstanding startRead(SendRequest wr, int sinkStag, long sinkTo, int size) {
        return start(slot().read(wr, sinkStag, sinkTo, size));
    }

    /** A started atomic, matched by {@code id}: its ORD slot. */
    Outstanding startAtomic(SendRequest wr, int id) {
        return start(slot().atomic(wr, id));
    }

    private Outstanding slot() {
        Outstanding o = spareSlots.poll();
        return o != null ? o : new Outstanding();
    }

    private <S extends StartedRequest> S start(S s) {
        started.add(s);
        return s;
    }

    /** {@code wr} fails before it started: its completion still waits for every earlier one. */
    void fail(SendRequest wr, Completion c) {
        complete(start(new Sent(wr)), c); // never written: not reused
    }

    /** Records a request's outcome and releases completions in submission order. */
    void complete(StartedRequest s, Completion c) {
        if (s.outcome() == null) {
            s.outcome(c);
        }
        releaseCompleted();
    }

    /**
     * {@code s} succeeded with {@code byteLength} octets ({@code value}: an atomic's original value). When
     * every earlier request's completion has left, its own leaves at once, without a {@link Completion}
     * for a reusing listener; otherwise it waits for them as {@link #complete} has it wait.
     */
    void succeeded(StartedRequest s, int byteLength, long value) {
        SendRequest wr = s.wr();
        if (started.peek() != s || s.outcome() != null) {
            complete(s, VERBS.success(wr.wrId(), Requester.opcodeOf(wr), byteLength, false, 0, value,
                    false));
            return;
        }
        started.poll();
        stream.sendSlotFreed();
        reuse(s);
        if (s instanceof Sent) {
            spareSent.offer(((Sent) s).spare()); // its write was reported: nothing below holds it any more
        }
        if (wr.isSignaled()) {
            VERBS.addSuccess(sendCq, wr.wrId(), Requester.opcodeOf(wr), byteLength, value);
        }
        releaseCompleted();
    }

    /** Hands on the completions at the head of the started requests whose outcome is known. */
    private void releaseCompleted() {
        StartedRequest head;
        while ((head = started.peek()) != null && head.outcome() != null) {
            started.poll();
            stream.sendSlotFreed();
            Completion done = head.outcome();
            boolean report = !done.isSuccess() || head.wr().isSignaled();
            reuse(head);
            if (report) {
                VERBS.add(sendCq, done);
            }
        }
    }

    /** An ORD slot off both queues serves a later Read or atomic. */
    private void reuse(StartedRequest s) {
        if (s instanceof Outstanding) {
            ((Outstanding) s).clear();
            spareSlots.offer((Outstanding) s);
        }
    }

    /**
     * Completes every started request in error, or with its outcome when known (RFC 5041 §6); requests
     * handed to the lower layer whose write has not completed yet are flushed too.
     */
    void flush(String why) {
        StartedRequest p;
        while ((p = started.poll()) != null) {
            stream.sendSlotFreed();
            Completion c = p.outcome() != null ? p.outcome()
                    : VERBS.error(p.wr().wrId(), Requester.opcodeOf(p.wr()), WcStatus.WR_FLUSH_ERR, why);
            p.outcome(c);
            if (!c.isSuccess() || p.wr().isSignaled()) {
                VERBS.add(sendCq, c);
            }
        }
    }

    /**
     * A Send, Write or Immediate Data: the promise of its last segment's write, which completes the request
     * once the segment was handed to the lower layer. Armed again for a later request once its completion
     * left in order.
     */
    private final class Sent extends WritePromise implements StartedRequest {
        private SendRequest wr;
        private Completion outcome;

        Sent(SendRequest wr) {
            super(stream.ctx().channel());
            this.wr = wr;
        }

        Sent rearm(SendRequest wr) {
            rearm();
            this.wr = wr;
            outcome = null;
            return this;
        }

        /** Forgets its request (and so the request's region and memory) while it waits to be armed again. */
        Sent spare() {
            wr = null;
            outcome = null;
            return this;
        }

        @Override
        public SendRequest wr() {
            return wr;
        }

        @Override
        public Completion outcome() {
            return outcome;
        }

        @Override
        public void outcome(Completion c) {
            outcome = c;
        }

        @Override
        protected void written(Throwable cause) {
            if (cause == null) {
                succeeded(this, wr.length(), 0);
            } else {
                complete(this, VERBS.error(wr.wrId(), Requester.opcodeOf(wr), WcStatus.WR_FLUSH_ERR,
                        String.valueOf(cause)));
            }
        }
    }
}
