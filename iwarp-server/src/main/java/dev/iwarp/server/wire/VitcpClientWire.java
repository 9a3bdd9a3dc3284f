package dev.iwarp.server.wire;

import dev.iwarp.vitcp.VitcpConfig;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The client side of {@link VitcpWire}: a VI endpoint per connection, connected to the server's discriminator with
 * the CRC option and RDMA Read Window the tool asks for.
 */
final class VitcpClientWire extends VitcpSide implements ClientWire {
    private final VitcpConfig base;

    VitcpClientWire(VitcpConfig base, byte[] discriminator, int threads) {
        super(discriminator, threads, UnaryOperator.identity());
        this.base = base;
    }

    @Override
    public String setupCarrier() {
        return "ConnectAccept"; // in its Calling Discriminator
    }

    @Override
    public String remoteRegion(long address, int handle, long size) {
        return String.format("memory handle 0x%08x address 0x%016x size %d", handle, address, size);
    }

    @Override
    public WireConnection connect(InetSocketAddress server, WireDomain domain, boolean crc, int readDepth,
                                  WireCompletionListener listener, Consumer<WireConnection> beforeStartup,
                                  long timeoutMs) throws IOException {
        VitcpConfig config = base.toBuilder().crcOption(crc || base.crcOption())
                .rdmaReadWindow(Math.max(1, Math.min(readDepth, 0xFFFF)))
                .connectTimeout(Duration.ofMillis(timeoutMs)).build();
        VitcpWire.Connection c = new VitcpWire.Connection(VitcpDomain.pdOf(domain), config, listener);
        beforeStartup.accept(c); // receives posted now are announced in the ConnectRequest (§3.2)
        FirstOctets.Watch watch = new FirstOctets.Watch(PeerFraming.VITCP);
        c.established = provider.connect(c.endpoint(), server, new byte[0], discriminator, watch::install);
        try {
            c.established.get(timeoutMs + 1_000, TimeUnit.MILLISECONDS);
            c.channel = c.endpoint().channel();
            return c;
        } catch (ExecutionException e) {
            String other = watch.mismatch(server); // the server answered in another framing: say which
            throw new IOException(other != null ? other : "cannot connect to " + Addresses.format(server) + ": "
                    + Addresses.reason(e.getCause()), e.getCause());
        } catch (TimeoutException e) {
            String other = watch.mismatchOnceRead(server, FirstOctets.readGraceMillis(timeoutMs)); // arrived, not yet read?
            if (other != null) {
                throw new IOException(other, e);
            }
            throw new IOException("cannot connect to " + Addresses.format(server) + ": no ConnectAccept within "
                    + timeoutMs
                    + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted connecting to " + Addresses.format(server), e);
        }
    }
}
