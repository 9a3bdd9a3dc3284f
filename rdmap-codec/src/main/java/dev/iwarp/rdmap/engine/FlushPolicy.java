package dev.iwarp.rdmap.engine;

/**
 * When a stream's writes are flushed to the socket, owned by its {@link Transmitter}: one rule set instead of
 * flags spread over the engine's parts. Like Netty's {@code FlushConsolidationHandler}, a read batch (the
 * ULPDUs between the first {@code channelRead} and {@code channelReadComplete}) writes what it causes and
 * flushes once at its end, never per message inside it. Outside a batch a post flushes what it wrote, and
 * the transmitter flushes what it writes when writability returns. One exception inside a batch: held Read
 * and Atomic Requests go out early once no more than half of ORD remain on the wire, so the responder never
 * runs dry waiting for the batch's end. Confined to the event loop.
 */
final class FlushPolicy {
    /** Flushes the channel. */
    private final Runnable flush;
    /** Between the first ULPDU of a read and {@code channelReadComplete}. */
    private boolean inReadBatch;
    /** Read and Atomic Requests written inside the current read batch and not flushed yet. */
    private int requestsHeld;
    /** A transmit asked for a flush while another ran: the running one flushes. */
    private boolean flushAsked;
    /** A transmit left its flush to the transmitter's report task. */
    private boolean flushOwed;
    /** The transmitter's report task is queued on the event loop. */
    private boolean reportScheduled;

    FlushPolicy(Runnable flush) {
        this.flush = flush;
    }

    /** A ULPDU arrived: the read batch runs until {@link #readComplete}. */
    void readStarted() {
        inReadBatch = true;
    }

    boolean inReadBatch() {
        return inReadBatch;
    }

    /** {@code channelReadComplete}: the batch ends with one flush of everything it wrote. */
    void readComplete() {
        inReadBatch = false;
        flush.run();
        requestsHeld = 0;
    }

    /** The connection closed: no batch is running any more. */
    void connectionClosed() {
        inReadBatch = false;
    }

    /** Whether a request posted now flushes what it writes: not inside a read batch, whose end flushes. */
    boolean postFlushes() {
        return !inReadBatch;
    }

    /** A Read or Atomic Request was written; inside a read batch it is held until a flush. */
    void requestWritten() {
        if (inReadBatch) {
            requestsHeld++;
        }
    }

    /**
     * A response to one of our requests arrived, leaving {@code outstanding} requests of {@code ord}. Requests
     * posted while a batch of responses is read would wait for the batch's end, and a batch can hold all ORD
     * responses: the responder, every request answered, would sit idle until the requester is done, and the two
     * ends would take turns instead of overlapping. So the held requests go out as soon as no more than half of
     * ORD remain on the wire (RFC 5040 §5.2: ORD bounds what is outstanding, not when it is sent).
     */
    void responseArrived(int outstanding, int ord) {
        if (requestsHeld > 0 && outstanding - requestsHeld <= ord / 2) {
            requestsHeld = 0;
            flush.run();
        }
    }

    /** A transmit asked for {@code flush} while another ran: the running one decides for both. */
    void askedWhileTransmitting(boolean flush) {
        flushAsked |= flush;
    }

    /**
     * A write loop ended; whether its writes are to be flushed: something was written and a flush was asked
     * for (by this call or one that ran into it), or an earlier loop left one owed.
     */
    boolean afterWrites(boolean wrote, boolean flushRequested) {
        boolean now = (wrote && (flushRequested || flushAsked)) || flushOwed;
        flushAsked = false;
        return now;
    }

    /**
     * The flush {@code owed} (from {@link #afterWrites}) is left to the transmitter's report task; whether that
     * task must be queued (it is not queued yet).
     */
    boolean deferToReport(boolean owed) {
        flushOwed = owed;
        if (reportScheduled) {
            return false;
        }
        reportScheduled = true;
        return true;
    }

    /** The report task runs: a later deferral queues it again. */
    void reportRunning() {
        reportScheduled = false;
    }

    /** Flushes now: whatever was owed is paid. */
    void flushNow() {
        flushOwed = false;
        flush.run();
    }
}
