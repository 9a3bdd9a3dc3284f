package dev.iwarp.server.wire;

import io.netty.channel.ChannelPipeline;

import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * What a wire's framing tells serve's guard about the messages it hands up once a connection's request arrived:
 * whether it holds part of one not handed up yet (the guard's message deadline), and whether one moves data (what
 * its idle timeout counts as activity). {@link ServerWire#messages()} gives it.
 */
public interface FramedMessages {
    /**
     * Whether the framing in {@code p} holds an incomplete message (FPDU, IFT frame, VI/TCP segment), as a check the
     * guard keeps: null while no handler that can say is in place (MPA's framer replaces its startup handler when
     * startup ends), and for good where messages arrive whole (SCTP).
     */
    BooleanSupplier partialMessage(ChannelPipeline p);

    /** Whether {@code msg}, a message the framing handed up, moves data; anything it does not know counts. */
    boolean movesData(Object msg);

    /**
     * The number of messages the framing in {@code p} completed so far (FPDUs, IFT frames), a count that only grows:
     * where the RDMA core takes them from the framing directly, none is handed up past the framing, and this is how
     * the guard learns a message completed during a read. Null where the framing cannot say (or hands every message
     * up); asked once {@link #partialMessage} found the framing's handler.
     */
    default LongSupplier messagesCompleted(ChannelPipeline p) {
        return null;
    }
}
