package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.VitcpConfig;
import dev.iwarp.vitcp.VitcpConnectListener;
import dev.iwarp.vitcp.VitcpListenerTable;
import io.netty.channel.Channel;

import java.net.InetSocketAddress;

/**
 * The one listening VI/TCP port of a host (draft-dicecco-vitcp-01 §2.2.2.2.1): a bound server channel plus the
 * discriminators that listen on it.
 */
public final class ViListener implements AutoCloseable {
    private final Channel serverChannel;
    final VitcpListenerTable table;

    ViListener(Channel serverChannel, VitcpListenerTable table) {
        this.serverChannel = serverChannel;
        this.table = table;
    }

    public InetSocketAddress localAddress() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    /**
     * Listens for ConnectRequests to {@code discriminator} (VipConnectWait); the listener decides each, now or later,
     * typically with {@link ViEndpoint#accept}. Returns a handle that stops listening.
     */
    public AutoCloseable register(byte[] discriminator, VitcpConfig config, VitcpConnectListener listener) {
        return table.register(discriminator, config, false, listener);
    }

    /**
     * Closes the listening socket; nothing to do once it is closed (its provider's {@link ViProvider#close()} closes
     * it, and may stop the loop it ran on).
     */
    @Override
    public void close() {
        if (!serverChannel.isOpen()) {
            return; // closing it again would hand a task to a loop that may no longer take one
        }
        serverChannel.close().syncUninterruptibly();
    }
}
