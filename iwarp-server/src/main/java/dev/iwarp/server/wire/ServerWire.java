package dev.iwarp.server.wire;

import java.net.InetSocketAddress;
import java.util.function.Consumer;

/** The listening side of a wire: binds a port and hands every connection request to the server. */
public interface ServerWire extends AutoCloseable {
    /** "iwarp", "vitcp" or "ift". */
    String name();

    WireDomain allocDomain();

    /** Binds {@code local}; {@code requests} is called on the connection's event loop. */
    Listener listen(InetSocketAddress local, Consumer<WireConnectRequest> requests) throws Exception;

    /** The listening settings for the server's start-up log line. */
    String describe();

    /** Releases the wire's threads (when it owns them). */
    @Override
    void close();

    /** A bound listening port. */
    interface Listener extends AutoCloseable {
        InetSocketAddress localAddress();

        @Override
        void close();
    }
}
