package dev.iwarp.server.wire;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpConnectionRequest;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.ListenOptions;
import dev.iwarp.bootstrap.SctpFraming;
import dev.iwarp.sctp.IndicationTransport;
import dev.iwarp.sctp.SctpAdaptation;
import dev.iwarp.sctp.SctpNative;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import io.netty.channel.Channel;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * DDP and RDMAP over SCTP (the SCTP DDP/RDMA adaptation, {@link SctpFraming}) as a wire: the same
 * iWARP stack and verbs as {@link IwarpWire}, SCTP associations instead of MPA over TCP. The adaptation
 * carries no private data, so serve's setup data (its target advertisement) is its first Send, as over
 * IFT ({@link SetupMessage}).
 */
public final class SctpWire {
    /** serve's default SCTP port (next to MPA's 7174 and VI/TCP's 7175). */
    public static final int DEFAULT_PORT = 7177;

    private SctpWire() {
    }

    /**
     * {@code null} when this machine can run the SCTP wire with {@code transport}, else one line
     * saying what is missing: libsctp.so.1, the kernel's SCTP, or native access for the indication.
     */
    public static String unavailableReason(IndicationTransport transport) {
        com.sun.nio.sctp.SctpChannel ch;
        try {
            ch = com.sun.nio.sctp.SctpChannel.open();
        } catch (UnsupportedOperationException e) {
            return "no SCTP here: the JDK cannot load libsctp.so.1 (install lksctp-tools): " + e.getMessage();
        } catch (IOException e) {
            return "no SCTP here: the kernel refuses SCTP sockets (load the sctp kernel module): " + e.getMessage();
        } catch (Throwable e) {
            return "no SCTP here: " + e;
        }
        try (com.sun.nio.sctp.SctpChannel c = ch) {
            if (transport == IndicationTransport.NATIVE) {
                if (SctpNative.unavailableReason() != null) {
                    return SctpNative.unavailableReason() + " (or choose --sctp-indication hello or static)";
                }
                SctpNative.prepare(c, 0);
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return e.getMessage();
        }
    }

    /** serve's listening side over SCTP on {@code stack}. */
    public static ServerWire server(IwarpStack stack, SctpFraming framing, boolean ownsStack) {
        return new ServerWire() {
            @Override
            public String name() {
                return "sctp";
            }

            @Override
            public WireDomain allocDomain() {
                return IwarpWire.domain(stack.allocPd());
            }

            @Override
            public String messageHandlerName(Channel ch) {
                return dev.iwarp.bootstrap.IwarpPipeline.LLP; // it hands each ULPDU to DDP
            }

            @Override
            public Listener listen(InetSocketAddress local, Consumer<? super Channel> onAccept,
                                   Consumer<WireConnectRequest> requests) throws Exception {
                return Listener.of(stack.listen(local, ListenOptions.of(framing).onAccept(onAccept),
                        r -> requests.accept(request(r))));
            }

            @Override
            public String transport() {
                return "SCTP, nio";
            }

            @Override
            public String describe() {
                return framing.toString();
            }

            @Override
            public void close() {
                if (ownsStack) {
                    stack.close();
                }
            }
        };
    }

    private static WireConnectRequest request(IwarpConnectionRequest r) {
        return new WireConnectRequest() {
            @Override
            public Channel channel() {
                return r.channel();
            }

            @Override
            public WireConnection accept(WireDomain domain, WireCompletionListener listener, byte[] setupData) {
                IwarpWire.Connection c = IwarpWire.connection(listener);
                ProtectionDomain pd = IwarpWire.pdOf(domain);
                QueuePair qp = r.accept(pd, c.sendCq(), c.recvCq(), setupData);
                // the adaptation carries no private data: the setup data is our first Send, as over IFT
                return c.attach(SetupMessage.postFirst(c, pd, qp, setupData));
            }

            @Override
            public void reject() {
                r.reject(new byte[0]);
            }
        };
    }

    /** The client side over SCTP on {@code stack} (not closed by the wire). */
    public static ClientWire client(IwarpStack stack, SctpFraming framing) {
        return new ClientWire() {
            @Override
            public String name() {
                return "sctp";
            }

            @Override
            public WireDomain allocDomain() {
                return IwarpWire.domain(stack.allocPd());
            }

            @Override
            public WireConnection connect(InetSocketAddress server, WireDomain domain, boolean crc, int readDepth,
                                          WireCompletionListener listener, Consumer<WireConnection> beforeStartup,
                                          long timeoutMs) throws IOException {
                IwarpWire.Connection c = IwarpWire.connection(listener);
                ProtectionDomain pd = IwarpWire.pdOf(domain);
                ConnectOptions opts = ConnectOptions.of(pd).framing(framing)
                        .completionQueues(c.sendCq(), c.recvCq()).beforeStartup(qp -> {
                            c.setup = SetupMessage.receive(pd, qp, framing.name()); // ahead of the ULP's receives
                            beforeStartup.accept(c.attach(qp));
                        });
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
                try {
                    c.attach(stack.connect(server, opts).get(timeoutMs, TimeUnit.MILLISECONDS));
                    SctpAdaptation a = c.queuePair().connectionParameters().framing(SctpAdaptation.class);
                    if (a.peer() == null) {
                        throw new IOException("the peer indicated no SCTP adaptation");
                    }
                    c.setupData = c.setup.await(c.qp, server, deadline); // serve's advertisement, within the timeout
                    return c;
                } catch (ExecutionException e) {
                    throw new IOException("cannot connect to " + server + " over SCTP: " + e.getCause().getMessage(),
                            e.getCause());
                } catch (TimeoutException e) {
                    throw new IOException("cannot connect to " + server + " over SCTP within " + timeoutMs + " ms", e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted connecting to " + server, e);
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
        };
    }
}
