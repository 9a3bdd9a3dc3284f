package dev.iwarp.server.wire;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.verbs.ProtectionDomain;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The client side of {@link IwarpWire}: {@code IwarpStack.connect} as Initiator of a {@link WireFraming} (MPA, IFT,
 * SCTP), the queue pair bound to an {@link IwarpWire.Connection}. A framing without private data gets serve's setup
 * data as its first Send ({@link SetupMessage}).
 */
final class IwarpClientWire implements ClientWire {
    private final IwarpStack stack;
    private final WireFraming kind;
    private final Framing fixed;
    private final TlsSettings tls;

    /** {@code fixed}: the framing to connect with (null: {@code kind}'s from the CRC and read depth asked for). */
    IwarpClientWire(IwarpStack stack, WireFraming kind, Framing fixed, TlsSettings tls) {
        this.stack = stack;
        this.kind = kind;
        this.fixed = fixed;
        this.tls = tls;
    }

    @Override
    public String name() {
        return kind.wireName();
    }

    @Override
    public String setupCarrier() {
        return kind.setupCarrier();
    }

    @Override
    public String remoteRegion(long address, int handle, long size) {
        return String.format("STag 0x%08x TO 0x%016x size %d", handle, address, size);
    }

    @Override
    public WireDomain allocDomain() {
        return IwarpWire.domain(stack.allocPd());
    }

    @Override
    public WireConnection connect(InetSocketAddress server, WireDomain domain, boolean crc, int readDepth,
                                  WireCompletionListener listener, Consumer<WireConnection> beforeStartup,
                                  long timeoutMs) throws IOException {
        Framing framing = kind.initiator(fixed, crc, readDepth);
        IwarpWire.Connection c = IwarpWire.connection(listener);
        ProtectionDomain pd = IwarpDomain.pdOf(domain);
        PeerFraming own = tls != null ? PeerFraming.TLS : kind.peerFraming();
        FirstOctets.Watch watch = own == null ? null : new FirstOctets.Watch(own);
        ConnectOptions opts = ConnectOptions.of(pd).framing(framing).completionQueues(c.sendCq(), c.recvCq())
                .beforeStartup(qp -> {
                    if (!framing.carriesPrivateData()) {
                        c.setup = SetupMessage.receive(pd, qp, framing.name()); // ahead of the ULP's receives
                    }
                    beforeStartup.accept(c.attach(qp));
                }).tls(tls);
        if (watch != null) {
            opts = opts.channelHook(watch::install);
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        try {
            c.attach(stack.connect(server, opts).get(timeoutMs, TimeUnit.MILLISECONDS));
            kind.checkEstablished(c.qp);
            if (c.setup != null) { // no private data: serve's setup message, within what is left of the timeout
                c.setupData = c.setup.await(c.qp, server, deadline);
            }
            return c;
        } catch (ExecutionException e) {
            String other = watch == null ? null : watch.mismatch(server); // the server answered in another framing
            throw new IOException(other != null ? other : kind.connectFailed(Addresses.format(server),
                    Addresses.reason(e.getCause())), e.getCause());
        } catch (TimeoutException e) {
            String other = watch == null ? null // arrived, not yet read?
                    : watch.mismatchOnceRead(server, FirstOctets.readGraceMillis(timeoutMs));
            throw new IOException(other != null ? other : kind.noAnswer(Addresses.format(server), timeoutMs), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted connecting to " + Addresses.format(server), e);
        } finally {
            if (c.setup != null && c.setupData == null) {
                c.setup.abandon();
            }
        }
    }

    @Override
    public void close() {
        // the stack belongs to the caller
    }
}
