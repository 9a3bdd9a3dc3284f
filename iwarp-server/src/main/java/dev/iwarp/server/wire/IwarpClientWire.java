package dev.iwarp.server.wire;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IftFraming;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.ProtectionDomain;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The client side of {@link IwarpWire}: {@code IwarpStack.connect} with MPA (or a fixed framing, IFT included) as
 * Initiator, the queue pair bound to an {@link IwarpWire.Connection}.
 */
final class IwarpClientWire implements ClientWire {
    private final IwarpStack stack;
    private final Framing fixed;
    private final TlsSettings tls;

    IwarpClientWire(IwarpStack stack, Framing fixed, TlsSettings tls) {
        this.stack = stack;
        this.fixed = fixed;
        this.tls = tls;
    }

    @Override
    public String name() {
        return fixed instanceof IftFraming ? "ift" : "iwarp";
    }

    @Override
    public WireDomain allocDomain() {
        return IwarpWire.domain(stack.allocPd());
    }

    @Override
    public WireConnection connect(InetSocketAddress server, WireDomain domain, boolean crc, int readDepth,
                                  WireCompletionListener listener, Consumer<WireConnection> beforeStartup,
                                  long timeoutMs) throws IOException {
        Framing framing = fixed instanceof IftFraming ift
                ? ift.irdOrd(1, Math.max(1, Math.min(readDepth, IftFraming.DEFAULT_DEPTH)))
                : fixed != null ? fixed
                : MpaFraming.of(MpaSettings.builder().revision(2).crc(crc).ird(1)
                .ord(Math.max(1, Math.min(readDepth, 128))).build());
        IwarpWire.Connection c = IwarpWire.connection(listener);
        ProtectionDomain pd = IwarpWire.pdOf(domain);
        FirstOctets.Watch watch = new FirstOctets.Watch(tls != null ? PeerFraming.TLS
                : framing instanceof IftFraming ? PeerFraming.IFT : PeerFraming.MPA);
        ConnectOptions opts = ConnectOptions.of(pd).channelHook(watch::install).framing(framing).completionQueues(c.sendCq(), c.recvCq())
                .beforeStartup(qp -> {
                    if (!framing.carriesPrivateData()) {
                        c.setup = SetupMessage.receive(pd, qp, framing.name()); // ahead of the ULP's receives
                    }
                    beforeStartup.accept(c.attach(qp));
                }).tls(tls);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        try {
            c.attach(stack.connect(server, opts).get(timeoutMs, TimeUnit.MILLISECONDS));
            if (c.setup != null) { // no private data: serve's setup message, within what is left of the timeout
                c.setupData = c.setup.await(c.qp, server, deadline);
            }
            return c;
        } catch (ExecutionException e) {
            String other = watch.mismatch(server); // the server answered in another framing: say which
            throw new IOException(other != null ? other : "cannot connect to " + Addresses.format(server) + ": "
                    + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            String other = watch.mismatchOnceRead(server, Math.min(timeoutMs, 2_000)); // arrived, not yet read?
            if (other != null) {
                throw new IOException(other, e);
            }
            throw new IOException("cannot connect to " + Addresses.format(server) + ": no " + (framing instanceof IftFraming
                    ? "IFT phase 1 indication" : "MPA Reply") + " within " + timeoutMs + " ms", e);
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
