package dev.iwarp.server.wire;

import io.netty.channel.ChannelPipeline;

import java.util.function.BooleanSupplier;

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
}
