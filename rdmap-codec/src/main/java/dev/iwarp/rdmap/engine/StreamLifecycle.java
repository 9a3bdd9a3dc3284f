package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.rdmap.ReadRequestHeader;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.verbs.WcStatus;
import io.netty.buffer.ByteBuf;

/**
 * How the parts of the engine end their stream (as Netty's {@code Http2LifecycleManager} for HTTP/2): the
 * {@link Receiver}, the {@link Responder}'s copies and the engine's own error handling call these instead of
 * reaching into the engine or the stream's fields. {@link RdmapStream} implements it. Event loop only.
 */
interface StreamLifecycle {
    /**
     * An error the peer caused: send a Terminate naming it (RFC 5040 §7), complete all outstanding work in
     * error and close once the Terminate is on the wire.
     *
     * @param offending   the segment that failed, or {@code null} (not released here)
     * @param readRequest the offending Read Request header to quote, or {@code null}
     */
    void terminate(TerminateCause cause, DdpSegment offending, ReadRequestHeader readRequest, String what);

    /** As {@link #terminate(TerminateCause, DdpSegment, ReadRequestHeader, String)}, with the Terminate built. */
    void terminate(TerminateMessage terminate, String what);

    /** The peer's Terminate (its RDMAP payload) ends the stream; it is not answered (RFC 5040 §5.4). */
    void onPeerTerminate(ByteBuf terminate);

    /** The connection is lost or closed, or startup failed: everything completes in error with {@code status}. */
    void toError(WcStatus status, String why);

    /** Graceful close (RFC 5040 §6.2.1): what was posted goes out, then the lower layer closes. */
    void closeGracefully();
}
