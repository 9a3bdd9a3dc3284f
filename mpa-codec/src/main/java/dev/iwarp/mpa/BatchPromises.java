package dev.iwarp.mpa;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelPromise;

/**
 * The real promises of the {@link FpduBatch}es written with more than one, each completed as its batch's write
 * is: one listener per framer for all its batches, with its queues reused, so that a batch of small Read
 * Responses costs no notifier object and no array of its promises (it was a notifier and two arrays per batch).
 * The promises complete in the order their FPDUs were written: the channel reports its writes in that order, and a
 * batch reported before an earlier one waits for it. Confined to the framer's event loop; safe when completing a
 * promise writes or completes further batches from inside {@link #operationComplete}.
 */
final class BatchPromises implements ChannelFutureListener {
    private static final ChannelFuture[] NO_BATCHES = {};
    private static final ChannelPromise[] NO_PROMISES = {};
    private static final int[] NO_COUNTS = {};
    private static final boolean[] NO_DONE = {};
    /**
     * The batches written and not yet done with, oldest first, a ring of {@code batches.length} (a power of 2). Empty
     * until a batch holds two promises: most connections never have one (each of the four arrays is made then).
     */
    private ChannelFuture[] batches = NO_BATCHES;
    /** Per batch: its promises not yet completed, and whether its write was reported. */
    private int[] counts = NO_COUNTS;
    private boolean[] done = NO_DONE;
    private int head;
    private int size;
    /** The promises of those batches, batch after batch, in order; a ring of {@code promises.length}. */
    private ChannelPromise[] promises = NO_PROMISES;
    private int promiseHead;
    private int promiseCount;

    /**
     * Completes {@code p[0..n)} when {@code batch} is done (it must get this listener after this call); takes them
     * out of {@code p}.
     */
    void add(ChannelFuture batch, ChannelPromise[] p, int n) {
        if (size == batches.length) {
            growBatches();
        }
        if (promiseCount + n > promises.length) {
            growPromises(promiseCount + n);
        }
        int i = (head + size++) & (batches.length - 1);
        batches[i] = batch;
        counts[i] = n;
        done[i] = false;
        int mask = promises.length - 1;
        for (int k = 0; k < n; k++) {
            promises[(promiseHead + promiseCount++) & mask] = p[k];
            p[k] = null;
        }
    }

    /** Number of promises waiting for their batch's write (for tests). */
    int pending() {
        return promiseCount;
    }

    @Override
    public void operationComplete(ChannelFuture future) {
        for (int k = 0; k < size; k++) {
            int i = (head + k) & (batches.length - 1);
            if (batches[i] == future) {
                done[i] = true;
                break;
            }
        }
        // completes the promises of the oldest batches whose writes were reported; the state is consistent before
        // each promise completes, so that its listeners may write (add) or see further batches done (re-enter)
        while (size > 0 && done[head]) {
            if (counts[head] == 0) {
                batches[head] = null;
                done[head] = false;
                head = (head + 1) & (batches.length - 1);
                size--;
                continue;
            }
            ChannelFuture batch = batches[head];
            ChannelPromise p = promises[promiseHead];
            promises[promiseHead] = null;
            promiseHead = (promiseHead + 1) & (promises.length - 1);
            promiseCount--;
            counts[head]--;
            if (batch.isSuccess()) {
                p.trySuccess();
            } else if (batch.isCancelled()) {
                p.cancel(false);
            } else {
                p.tryFailure(batch.cause());
            }
        }
    }

    private void growBatches() {
        int n = batches.length;
        int m = Math.max(4, n * 2);
        ChannelFuture[] b = new ChannelFuture[m];
        int[] c = new int[m];
        boolean[] d = new boolean[m];
        for (int k = 0; k < size; k++) {
            int i = (head + k) & (n - 1);
            b[k] = batches[i];
            c[k] = counts[i];
            d[k] = done[i];
        }
        batches = b;
        counts = c;
        done = d;
        head = 0;
    }

    private void growPromises(int needed) {
        int n = promises.length;
        int capacity = Math.max(16, n);
        while (capacity < needed) {
            capacity *= 2;
        }
        ChannelPromise[] p = new ChannelPromise[capacity];
        for (int k = 0; k < promiseCount; k++) {
            p[k] = promises[(promiseHead + k) & (n - 1)];
        }
        promises = p;
        promiseHead = 0;
    }
}
