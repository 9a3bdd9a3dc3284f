package dev.iwarp.bootstrap;

import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.rdmap.engine.RdmaEngine;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;

import java.util.Objects;
import java.util.function.Consumer;

/** How {@link IwarpStack#connect} builds a queue pair and which framing it starts. Immutable. */
public final class ConnectOptions {
    private final ProtectionDomain pd;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final Framing framing;
    private final Consumer<QueuePair> beforeStartup;
    private final TlsSettings tls;
    /** 0: the device's {@code RdmaDevice.sendQueueDepth()}. */
    private int sendQueueDepth;
    /** -1: the device's {@code RdmaDevice.readResponseRate()}. */
    private long readResponseRate = -1;
    /** Sees the connection's channel before any handler is added (e.g. to watch the peer's first octets). */
    private Consumer<io.netty.channel.Channel> channelHook = ch -> { };

    private ConnectOptions(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, Framing framing,
                           Consumer<QueuePair> beforeStartup) {
        this(pd, sendCq, recvCq, framing, beforeStartup, null);
    }

    private ConnectOptions(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, Framing framing,
                           Consumer<QueuePair> beforeStartup, TlsSettings tls) {
        this.pd = Objects.requireNonNull(pd, "pd");
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.framing = framing;
        this.beforeStartup = beforeStartup;
        this.tls = tls;
    }

    /** Defaults: MPA with {@link MpaSettings#defaults()}, a new send and a new receive completion queue. */
    public static ConnectOptions of(ProtectionDomain pd) {
        return new ConnectOptions(pd, new CompletionQueue(), new CompletionQueue(), MpaFraming.of(MpaSettings.defaults()),
                qp -> { });
    }

    /** The framing to start (MPA, or the later IFT and SCTP framings). */
    public ConnectOptions framing(Framing framing) {
        return keepQueuePairSettings(new ConnectOptions(pd, sendCq, recvCq, Objects.requireNonNull(framing),
                beforeStartup, tls));
    }

    /** MPA with these settings: shorthand for {@code framing(MpaFraming.of(settings))}. */
    public ConnectOptions mpa(MpaSettings settings) {
        return framing(MpaFraming.of(settings));
    }

    /** Uses these completion queues for the queue pair's send and receive work requests. */
    public ConnectOptions completionQueues(CompletionQueue send, CompletionQueue recv) {
        return keepQueuePairSettings(new ConnectOptions(pd, Objects.requireNonNull(send), Objects.requireNonNull(recv),
                framing, beforeStartup, tls));
    }

    /**
     * Called with the new queue pair before the framing starts: post the receives the peer's first
     * messages need here (when the framing retries, e.g. MPA's Rev 1 fallback, this runs again for
     * the second attempt's queue pair).
     */
    public ConnectOptions beforeStartup(Consumer<QueuePair> callback) {
        return keepQueuePairSettings(new ConnectOptions(pd, sendCq, recvCq, framing, Objects.requireNonNull(callback),
                tls));
    }

    /**
     * Run the framing inside TLS with these settings (the framing starts once the handshake
     * completed; MPA then takes its MULPDU from the TLS record size), or plain TCP with {@code null}.
     */
    public ConnectOptions tls(TlsSettings settings) {
        return keepQueuePairSettings(new ConnectOptions(pd, sendCq, recvCq, framing, beforeStartup, settings));
    }

    /**
     * The queue pair's send-queue depth (libibverbs {@code max_send_wr}): a {@code postSend} beyond it fails at once
     * with {@code SendQueueFullException}. Default: the device's ({@code RdmaDevice.DEFAULT_SEND_QUEUE_DEPTH}, 1024).
     */
    public ConnectOptions sendQueueDepth(int requests) {
        if (requests < 1) {
            throw new IllegalArgumentException("send queue depth " + requests);
        }
        ConnectOptions o = copy();
        o.sendQueueDepth = requests;
        return o;
    }

    /**
     * Octets per second of RDMA Read Responses this queue pair sends the peer at most (0: no limit). Default: the
     * device's ({@code RdmaDevice.setReadResponseRate}).
     */
    public ConnectOptions readResponseRate(long octetsPerSecond) {
        if (octetsPerSecond < 0) {
            throw new IllegalArgumentException("read response rate " + octetsPerSecond);
        }
        ConnectOptions o = copy();
        o.readResponseRate = octetsPerSecond;
        return o;
    }

    /**
     * Called with this connection's channel before TLS or the framing adds its handlers (for every attempt, the
     * Rev 1 fallback's too), e.g. to put a handler at the head of its pipeline that watches the peer's first octets.
     */
    public ConnectOptions channelHook(Consumer<io.netty.channel.Channel> hook) {
        ConnectOptions o = copy();
        o.channelHook = Objects.requireNonNull(hook, "hook");
        return o;
    }

    Consumer<io.netty.channel.Channel> channelHook() {
        return channelHook;
    }

    private ConnectOptions keepQueuePairSettings(ConnectOptions o) {
        o.sendQueueDepth = sendQueueDepth;
        o.readResponseRate = readResponseRate;
        o.channelHook = channelHook;
        return o;
    }

    private ConnectOptions copy() {
        return keepQueuePairSettings(new ConnectOptions(pd, sendCq, recvCq, framing, beforeStartup, tls));
    }

    /** Applies the queue-pair settings to a new engine. */
    RdmaEngine configure(RdmaEngine engine) {
        if (sendQueueDepth > 0) {
            engine.sendQueueDepth(sendQueueDepth);
        }
        if (readResponseRate >= 0) {
            engine.readResponseRate(readResponseRate);
        }
        return engine;
    }

    /** The TLS settings, or {@code null} for plain TCP. */
    public TlsSettings tls() {
        return tls;
    }

    /** The protection domain of the queue pair. */
    public ProtectionDomain pd() {
        return pd;
    }

    /** The completion queue of send work requests (Send, RDMA Write, RDMA Read, Atomics). */
    public CompletionQueue sendCq() {
        return sendCq;
    }

    /** The completion queue of receive work requests. */
    public CompletionQueue recvCq() {
        return recvCq;
    }

    /** The framing the connection starts with (MPA unless set). */
    public Framing framing() {
        return framing;
    }

    Consumer<QueuePair> beforeStartupCallback() {
        return beforeStartup;
    }
}
