package dev.iwarp.verbs;

import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.rdmap.TerminateCause;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;

/**
 * What an RDMA stream did, for metrics: the engine calls it on its event loop from a few places (every
 * inbound segment, every outbound message once written to the lower layer, every Terminate), so a
 * monitoring binding (Micrometer, JMX, a test) sees the traffic without the codecs depending on it. Put an
 * observer on a channel with {@link #KEY} before the engine is added (IwarpStack's builder does, see its
 * {@code observer}); without one the engine uses {@link #NONE}. Implementations must be cheap and must not
 * throw: they run on the hot path.
 */
public interface RdmaObserver {
    /** The channel attribute the engine reads its observer from when it is added to a pipeline. */
    AttributeKey<RdmaObserver> KEY = AttributeKey.valueOf(RdmaObserver.class, "observer");

    /** Observes nothing. */
    RdmaObserver NONE = new RdmaObserver() {
    };

    /** A Terminate's direction: sent, withheld (the lower layer could not carry it) or received. */
    enum TerminateDirection { SENT, WITHHELD, RECEIVED }

    /**
     * Payload moved: inbound, one DDP segment of {@code op} ({@code messageEnds} on its last segment); outbound,
     * one whole message of {@code op} handed to the lower layer ({@code messageEnds} true).
     */
    default void transferred(Channel ch, boolean inbound, RdmapOpcode op, int payloadOctets, boolean messageEnds) {
    }

    /** A Terminate (RFC 5040 §4.7) this stream sent, withheld or received. */
    default void terminate(Channel ch, TerminateDirection direction, TerminateCause cause) {
    }

    /**
     * The memory budget refused what the peer's message needed: this stream ends with a Terminate (reported to
     * {@link #terminate} as well), the others go on.
     */
    default void memoryRefused(Channel ch) {
    }
}
