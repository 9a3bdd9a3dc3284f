package dev.iwarp.server.wire;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.function.Consumer;

/** The connecting side of a wire: what ping and bench need, the same code on iWARP and VI/TCP. */
public interface ClientWire extends AutoCloseable {
    /** The {@code --wire} it is: "iwarp", "vitcp", "ift" or "sctp". */
    String name();

    WireDomain allocDomain();

    /** Where serve's setup data (its target advertisement) reaches this client: "MPA Reply", "ConnectAccept". */
    String setupCarrier();

    /** A peer's region in this wire's words: "STag 0x.. TO 0x.. size n" (VI/TCP: memory handle and address). */
    String remoteRegion(long address, int handle, long size);

    /**
     * Connects (MPA Initiator; VI/TCP active end, §4.2; IFT node A) and returns once in full operation.
     *
     * @param crc           ask for the CRC (MPA C=1; the VI/TCP CRC option; IFT: ignored, its settings decide)
     * @param readDepth     RDMA Reads this end wants outstanding (MPA ORD; VI RDMA Read Window)
     * @param beforeStartup called before the connection request leaves (post receives here)
     */
    WireConnection connect(InetSocketAddress server, WireDomain domain, boolean crc, int readDepth,
                           WireCompletionListener listener, Consumer<WireConnection> beforeStartup, long timeoutMs)
            throws IOException;

    @Override
    void close();
}
