package dev.iwarp.sctp;

import io.netty.channel.Channel;

/** Aborts an association (SCTP ABORT, RFC 4960 §9.1); a channel that cannot abort is closed. */
public final class SctpAbort {
    private SctpAbort() {
    }

    public static void abort(Channel channel) {
        if (channel instanceof SctpShimChannel) {
            ((SctpShimChannel) channel).abort();
        } else {
            channel.close();
        }
    }
}
