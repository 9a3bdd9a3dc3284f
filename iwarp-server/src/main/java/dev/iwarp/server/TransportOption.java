package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.Transport;
import picocli.CommandLine.Option;

/** {@code --transport} of serve and bench (a picocli mixin): the Netty transport under the iWARP wires. */
final class TransportOption {
    @Option(names = "--transport", paramLabel = "NAME", description = "Netty transport: epoll, nio or io_uring "
            + "(default: epoll where its native library loads, else nio). io_uring needs Linux 5.14 or later with "
            + "io_uring allowed; the iWARP and IFT wires only (VI/TCP and SCTP run on NIO).")
    String name;

    /** The transport asked for (or the best available); {@link IllegalStateException} saying why it cannot run here. */
    Transport transport() {
        Transport t = name == null ? Transport.auto() : Transport.parse(name); // unknown name: usage error, exit 2
        t.checkAvailable();
        return t;
    }

    /** Refuses {@code --transport} on a wire that has its own transport. */
    void check(WireOptions wire) {
        if (name != null && !wire.tool().usesStackTransport()) {
            throw new IllegalArgumentException("--transport is for --wire iwarp and ift: VI/TCP and SCTP run on NIO");
        }
        if (name != null) {
            Transport.parse(name);
        }
    }

    IwarpStack.Builder apply(IwarpStack.Builder b) {
        return b.transport(transport());
    }
}
