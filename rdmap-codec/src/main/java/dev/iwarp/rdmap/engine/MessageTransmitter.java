package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpOutboundMessage;
import io.netty.channel.ChannelPromise;

/**
 * What the {@link Requester} and {@link Responder} need of the transmit side: queue a DDP message, have the
 * queue written, and the stream's {@link FlushPolicy}. {@link Transmitter} implements it; tests hand the two a
 * fake. Event loop only.
 */
interface MessageTransmitter {
    /**
     * Queues a message; it goes out with the next {@link #transmit}. Takes ownership of {@code message}.
     *
     * @param done completed with the message's last segment, or {@code null}
     */
    void enqueue(DdpOutboundMessage message, ChannelPromise done);

    /** Writes what is queued while the channel is writable; flushes it if {@code flush}. */
    void transmit(boolean flush);

    /** As {@link #transmit}, for a post: completions it causes are reported after the post returned. */
    void transmitPosted(boolean flush);

    /** When what is written is flushed. */
    FlushPolicy flushPolicy();
}
