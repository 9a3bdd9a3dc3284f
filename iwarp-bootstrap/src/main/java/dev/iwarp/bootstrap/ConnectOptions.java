package dev.iwarp.bootstrap;

import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;

import java.util.Objects;
import java.util.function.Consumer;

/** How {@link IwarpStack#connect} builds a queue pair and starts MPA as Initiator. Immutable. */
public final class ConnectOptions {
    private final ProtectionDomain pd;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final MpaSettings mpa;
    private final Consumer<QueuePair> beforeStartup;

    private ConnectOptions(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, MpaSettings mpa,
                           Consumer<QueuePair> beforeStartup) {
        this.pd = Objects.requireNonNull(pd, "pd");
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.mpa = mpa;
        this.beforeStartup = beforeStartup;
    }

    /** Defaults: MPA {@link MpaSettings#defaults()}, a new send and a new receive completion queue. */
    public static ConnectOptions of(ProtectionDomain pd) {
        return new ConnectOptions(pd, new CompletionQueue(), new CompletionQueue(), MpaSettings.defaults(), qp -> { });
    }

    public ConnectOptions mpa(MpaSettings settings) {
        return new ConnectOptions(pd, sendCq, recvCq, Objects.requireNonNull(settings), beforeStartup);
    }

    public ConnectOptions completionQueues(CompletionQueue send, CompletionQueue recv) {
        return new ConnectOptions(pd, Objects.requireNonNull(send), Objects.requireNonNull(recv), mpa, beforeStartup);
    }

    /**
     * Called with the new queue pair before MPA starts: post the receives the peer's first messages
     * need here (with a Rev 1 fallback this runs again for the second attempt's queue pair).
     */
    public ConnectOptions beforeStartup(Consumer<QueuePair> callback) {
        return new ConnectOptions(pd, sendCq, recvCq, mpa, Objects.requireNonNull(callback));
    }

    public ProtectionDomain pd() {
        return pd;
    }

    public CompletionQueue sendCq() {
        return sendCq;
    }

    public CompletionQueue recvCq() {
        return recvCq;
    }

    public MpaSettings mpa() {
        return mpa;
    }

    Consumer<QueuePair> beforeStartupCallback() {
        return beforeStartup;
    }
}
