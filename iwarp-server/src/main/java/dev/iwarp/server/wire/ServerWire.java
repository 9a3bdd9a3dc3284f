package dev.iwarp.server.wire;

import io.netty.channel.Channel;

import java.net.InetSocketAddress;
import java.util.function.Consumer;

/** The listening side of a wire: binds a port and hands every connection request to the server. */
public interface ServerWire extends AutoCloseable {
    /** The {@code --wire} it is: "iwarp", "vitcp", "ift" or "sctp". */
    String name();

    WireDomain allocDomain();

    /** Binds {@code local}; {@code requests} is called on the connection's event loop. */
    default Listener listen(InetSocketAddress local, Consumer<WireConnectRequest> requests) throws Exception {
        return listen(local, ch -> { }, requests);
    }

    /**
     * Binds {@code local}; {@code onAccept} is called with every accepted TCP connection before any framing handler is
     * added (it may close it), {@code requests} with every connection request, on the connection's event loop.
     */
    Listener listen(InetSocketAddress local, Consumer<? super Channel> onAccept, Consumer<WireConnectRequest> requests)
            throws Exception;

    /**
     * Where the framing hands up complete messages (ULPDUs of FPDUs or IFT frames, VI/TCP segments) in a connection's
     * pipeline once its request arrived: a handler added after this name sees each one.
     */
    String messageHandlerName(Channel ch);

    /** What the framing tells serve's guard about the messages it hands up (after {@link #messageHandlerName}). */
    FramedMessages messages();

    /** What carries the wire, for the server's start-up log line: "nio transport", "SCTP, nio". */
    String transport();

    /** The listening settings for the server's start-up log line (after {@link #transport()}). */
    String describe();

    /**
     * The framing a peer's first octets show when it speaks ours ({@link FirstOctets} answers peers of another one),
     * or null where nothing is to be told apart (SCTP; inside TLS).
     */
    default PeerFraming framing() {
        return null;
    }

    /** Releases the wire's threads (when it owns them). */
    @Override
    void close();

    /** A bound listening port. */
    interface Listener extends AutoCloseable {
        InetSocketAddress localAddress();

        @Override
        void close();

        /** A listener that is the bound channel {@code ch}: closing it closes the channel. */
        static Listener of(Channel ch) {
            return new Listener() {
                @Override
                public InetSocketAddress localAddress() {
                    return (InetSocketAddress) ch.localAddress();
                }

                @Override
                public void close() {
                    ch.close().syncUninterruptibly();
                }
            };
        }
    }
}
