package dev.iwarp.server.wire;

import dev.iwarp.vitcp.vi.ViProtectionDomain;
import dev.iwarp.vitcp.vi.ViProvider;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * What both ends of {@link VitcpWire} own: the discriminator, their own event loops and the VI provider over them,
 * and the domains allocated on them (deregistered at close).
 */
abstract class VitcpSide {
    final byte[] discriminator;
    final EventLoopGroup group;
    final ViProvider provider;
    /** The domains allocated here, whose regions {@link #close} deregisters; weak: one nobody holds is gone. */
    private final Set<ViProtectionDomain> domains = Collections.newSetFromMap(new WeakHashMap<>());

    VitcpSide(byte[] discriminator, int threads, UnaryOperator<IoHandlerFactory> ioHandlers) {
        this.discriminator = discriminator.clone();
        this.group = new MultiThreadIoEventLoopGroup(threads, ioHandlers.apply(NioIoHandler.newFactory()));
        this.provider = new ViProvider(group);
    }

    public String name() {
        return "vitcp";
    }

    public WireDomain allocDomain() {
        ViProtectionDomain pd = new ViProtectionDomain();
        synchronized (domains) {
            domains.add(pd);
        }
        return VitcpWire.domain(pd);
    }

    public void close() {
        provider.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        // as the iWARP device at its close: regions still registered give their buffers back (the event
        // loops have stopped, so no segment gathers from them any more)
        List<ViProtectionDomain> open;
        synchronized (domains) {
            open = new ArrayList<>(domains);
            domains.clear();
        }
        open.forEach(ViProtectionDomain::deregisterAll);
    }
}
