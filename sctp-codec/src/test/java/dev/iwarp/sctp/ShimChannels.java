package dev.iwarp.sctp;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;

import java.util.ArrayList;
import java.util.List;

/** EmbeddedChannels with the shim, started with a given pair of indications. */
final class ShimChannels {
    private ShimChannels() {
    }

    /**
     * An EmbeddedChannel that records {@link #abort()} instead of closing, so a test sees that the shim
     * asked for an ABORT (not a graceful close) and what it does with messages that follow in the
     * same read; with a native peer value for {@link IndicationTransport#NATIVE}.
     */
    static final class Channel extends EmbeddedChannel implements SctpShimChannel {
        final Errors errors;
        int aborts;
        long peerIndication = NO_INDICATION;

        Channel(ChannelHandler... handlers) {
            this(new Errors(), handlers);
        }

        private Channel(Errors errors, ChannelHandler[] handlers) {
            super(append(handlers, errors));
            this.errors = errors;
        }

        /**
         * As the constructor, with the channel's clock frozen before any handler can schedule a timeout, so
         * that {@link #advanceTimeBy} is exact however loaded the machine is (the handlers are added to the
         * registered, active channel, as a ULP upgrade would).
         */
        static Channel frozen(ChannelHandler... handlers) {
            Channel ch = new Channel(new Errors(), new ChannelHandler[0]);
            ch.freezeTime();
            ch.pipeline().addFirst(handlers);
            ch.runPendingTasks(); // the handler starts once the pipeline is complete
            return ch;
        }

        private static ChannelHandler[] append(ChannelHandler[] handlers, ChannelHandler last) {
            ChannelHandler[] all = java.util.Arrays.copyOf(handlers, handlers.length + 1);
            all[handlers.length] = last;
            return all;
        }

        @Override
        public long peerIndicationValue() {
            return peerIndication;
        }

        @Override
        public void abort() {
            aborts++;
        }
    }

    /** A channel whose codec runs with {@code local}/{@code peer}; the caller's handlers sit above. */
    static Channel started(SctpIndication local, SctpIndication peer, SctpSettings settings) {
        SctpPlacementCodec codec = new SctpPlacementCodec(settings);
        codec.start(new SctpAdaptation(local, peer, IndicationTransport.STATIC));
        return new Channel(codec, new AwsSequencer(settings));
    }

    static Channel started(SctpIndication local, SctpIndication peer) {
        return started(local, peer, SctpSettings.defaults());
    }

    static Errors errors(EmbeddedChannel ch) {
        return ((Channel) ch).errors;
    }

    static int aborts(EmbeddedChannel ch) {
        return ((Channel) ch).aborts;
    }

    /** Records exceptions reaching the top of the pipeline; passes everything else on. */
    static final class Errors extends ChannelInboundHandlerAdapter {
        final List<Throwable> seen = new ArrayList<>();

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            seen.add(cause);
        }

        SctpShimError only() {
            if (seen.size() != 1 || !(seen.get(0) instanceof SctpShimException)) {
                throw new AssertionError("expected one SctpShimException, saw " + seen);
            }
            return ((SctpShimException) seen.get(0)).error();
        }
    }
}
