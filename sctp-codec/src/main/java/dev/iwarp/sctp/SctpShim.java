package dev.iwarp.sctp;

import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.sctp.SctpMessageCompletionHandler;

/**
 * Installs the shim's handlers at the end of a pipeline:
 * <pre>
 *  [SctpMessageCompletionHandler] [SctpAdaptationHandler] [SctpPlacementCodec] [AwsSequencer]
 * </pre>
 * Above them, the ULP reads and writes {@link PlacementChunk}s once the {@link SctpAdaptationEvent}
 * said the adaptation is on.
 */
public final class SctpShim {
    public static final String COMPLETION = "sctp-completion";
    public static final String ADAPTATION = "sctp-adaptation";
    public static final String CODEC = "sctp-placement";
    public static final String SEQUENCER = "sctp-aws";

    private SctpShim() {
    }

    public static void addLast(ChannelPipeline p, SctpSettings settings) {
        p.addLast(COMPLETION, new SctpMessageCompletionHandler());
        p.addLast(ADAPTATION, new SctpAdaptationHandler(settings));
        p.addLast(CODEC, new SctpPlacementCodec(settings));
        p.addLast(SEQUENCER, new AwsSequencer(settings));
    }
}
