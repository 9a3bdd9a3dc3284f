package dev.iwarp.rdmap.engine.internal;

import io.netty.channel.Channel;
import io.netty.channel.ChannelPromise;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The promise of one message's last write, which the engine arms again for a later message once the
 * write succeeded and its completion left (no promise object per work request). Confined to
 * the event loop, like every promise Netty completes on a write.
 *
 * <p>Handlers below the engine treat it as any write promise: they pass it on or complete it once, and
 * may add listeners, which are told before the engine is. It cannot be waited for (a write promise
 * never is on the event loop, and no other thread sees this one) nor cancelled.
 */
public abstract class WritePromise implements ChannelPromise {
    /** The engine's logger (by name: this class lives apart from it), so a listener's failure is logged where the engine's are. */
    private static final Logger LOG = LoggerFactory.getLogger("dev.iwarp.rdmap.engine.RdmaEngine");

    private enum State { PENDING, SUCCEEDED, FAILED }

    private final Channel channel;
    private State state = State.PENDING;
    private Throwable cause;
    /** Listeners handlers below added; rare, so made only then. */
    private List<GenericFutureListener<? extends Future<? super Void>>> listeners;

    protected WritePromise(Channel channel) {
        this.channel = channel;
    }

    /** The write this promise stands for ended: {@code cause} is null on success. */
    protected abstract void written(Throwable cause);

    /** Pending again, for the next message: only once the previous write was reported. */
    public final void rearm() {
        if (state == State.PENDING) {
            throw new IllegalStateException("write promise rearmed while its write is pending");
        }
        state = State.PENDING;
        cause = null;
        listeners = null;
    }

    private boolean finish(State outcome, Throwable why) {
        if (state != State.PENDING) {
            return false;
        }
        state = outcome;
        cause = why;
        if (listeners != null) {
            for (GenericFutureListener<? extends Future<? super Void>> l : listeners) {
                notify(l);
            }
        }
        written(why); // may rearm this promise for a later message: nothing after this touches it
        return true;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void notify(GenericFutureListener l) {
        try {
            l.operationComplete(this);
        } catch (Throwable t) {
            LOG.warn("{} a listener of a write promise threw", channel, t);
        }
    }

    @Override
    public Channel channel() {
        return channel;
    }

    @Override
    public boolean trySuccess() {
        return finish(State.SUCCEEDED, null);
    }

    @Override
    public boolean trySuccess(Void result) {
        return trySuccess();
    }

    @Override
    public boolean tryFailure(Throwable why) {
        return finish(State.FAILED, why);
    }

    @Override
    public ChannelPromise setSuccess() {
        if (!trySuccess()) {
            throw new IllegalStateException("complete already: " + this);
        }
        return this;
    }

    @Override
    public ChannelPromise setSuccess(Void result) {
        return setSuccess();
    }

    @Override
    public ChannelPromise setFailure(Throwable why) {
        if (!tryFailure(why)) {
            throw new IllegalStateException("complete already: " + this, why);
        }
        return this;
    }

    @Override
    public boolean setUncancellable() {
        return true;
    }

    @Override
    public boolean isCancellable() {
        return false;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        return false;
    }

    @Override
    public boolean isCancelled() {
        return false;
    }

    @Override
    public boolean isDone() {
        return state != State.PENDING;
    }

    @Override
    public boolean isSuccess() {
        return state == State.SUCCEEDED;
    }

    @Override
    public Throwable cause() {
        return cause;
    }

    @Override
    public Void getNow() {
        return null;
    }

    @Override
    public boolean isVoid() {
        return false;
    }

    @Override
    public ChannelPromise unvoid() {
        return this;
    }

    @Override
    public ChannelPromise addListener(GenericFutureListener<? extends Future<? super Void>> listener) {
        if (isDone()) {
            notify(listener);
        } else {
            if (listeners == null) {
                listeners = new ArrayList<>(2);
            }
            listeners.add(listener);
        }
        return this;
    }

    @Override
    @SafeVarargs
    public final ChannelPromise addListeners(GenericFutureListener<? extends Future<? super Void>>... ls) {
        for (GenericFutureListener<? extends Future<? super Void>> l : ls) {
            addListener(l);
        }
        return this;
    }

    @Override
    public ChannelPromise removeListener(GenericFutureListener<? extends Future<? super Void>> listener) {
        if (listeners != null) {
            listeners.remove(listener);
        }
        return this;
    }

    @Override
    @SafeVarargs
    public final ChannelPromise removeListeners(GenericFutureListener<? extends Future<? super Void>>... ls) {
        for (GenericFutureListener<? extends Future<? super Void>> l : ls) {
            removeListener(l);
        }
        return this;
    }

    private UnsupportedOperationException notWaitable() {
        return new UnsupportedOperationException("the RDMA engine's write promise is not waited for; add a listener");
    }

    private ChannelPromise doneOrRefuse() {
        if (!isDone()) {
            throw notWaitable();
        }
        return this;
    }

    @Override
    public ChannelPromise sync() {
        return doneOrRefuse();
    }

    @Override
    public ChannelPromise syncUninterruptibly() {
        return doneOrRefuse();
    }

    @Override
    public ChannelPromise await() {
        return doneOrRefuse();
    }

    @Override
    public ChannelPromise awaitUninterruptibly() {
        return doneOrRefuse();
    }

    @Override
    public boolean await(long timeout, TimeUnit unit) {
        return doneOrRefuse().isDone();
    }

    @Override
    public boolean await(long timeoutMillis) {
        return doneOrRefuse().isDone();
    }

    @Override
    public boolean awaitUninterruptibly(long timeout, TimeUnit unit) {
        return doneOrRefuse().isDone();
    }

    @Override
    public boolean awaitUninterruptibly(long timeoutMillis) {
        return doneOrRefuse().isDone();
    }

    @Override
    public Void get() throws ExecutionException {
        if (doneOrRefuse().cause() != null) {
            throw new ExecutionException(cause);
        }
        return null;
    }

    @Override
    public Void get(long timeout, TimeUnit unit) throws ExecutionException {
        return get();
    }

    @Override
    public String toString() {
        return "WritePromise(" + state + (cause != null ? ", " + cause : "") + ")";
    }
}
