package dev.iwarp.vitcp;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Discriminators listening on one VI/TCP port: all incoming VI connections arrive on one port and are told apart
 * by the called discriminator (draft-dicecco-vitcp-01 §2.2.2.2.1). Thread-safe.
 */
public final class VitcpListenerTable {

    /** One listening discriminator with the attributes it accepts with. */
    public record Registration(byte[] discriminator, VitcpConfig config, boolean peerToPeer,
                               VitcpConnectListener listener) {
    }

    private final ConcurrentHashMap<ByteBuffer, Registration> table = new ConcurrentHashMap<>();

    /** Registers a discriminator; fails if it is taken. Returns a handle whose {@code close()} unregisters it. */
    public AutoCloseable register(byte[] discriminator, VitcpConfig config, boolean peerToPeer,
                                  VitcpConnectListener listener) {
        if (discriminator.length > ViCeHeader.MAX_DISCRIMINATOR_LENGTH) {
            throw new IllegalArgumentException("discriminator longer than 64 octets");
        }
        ByteBuffer key = ByteBuffer.wrap(discriminator.clone());
        Registration r = new Registration(discriminator.clone(), config, peerToPeer, listener);
        if (table.putIfAbsent(key, r) != null) {
            throw new IllegalStateException("discriminator already listening");
        }
        return () -> table.remove(key, r);
    }

    /** The registration for a called discriminator, or null (then ConnectNoMatch, §4.3). */
    public Registration match(byte[] calledDiscriminator) {
        return table.get(ByteBuffer.wrap(calledDiscriminator));
    }
}
