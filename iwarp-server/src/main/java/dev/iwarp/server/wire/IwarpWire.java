package dev.iwarp.server.wire;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpConnectionRequest;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.util.concurrent.Future;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/** The iWARP adapter: the wire-neutral shapes over {@code IwarpStack} and the verbs API of rdmap-codec. */
public final class IwarpWire {
    private IwarpWire() {
    }

    /** A verbs protection domain as a {@link WireDomain}. */
    public static WireDomain domain(ProtectionDomain pd) {
        return new Domain(pd);
    }

    /** The verbs region behind a {@link WireRegion} of this wire. */
    public static MemoryRegion memoryRegion(WireRegion r) {
        return ((Region) r).mr;
    }

    /** A connection whose completion queues feed {@code listener}; {@link Connection#attach} its queue pair. */
    public static Connection connection(WireCompletionListener listener) {
        return new Connection(listener);
    }

    /** {@code serve}'s listening side on {@code stack}; {@code ownsStack}: {@link ServerWire#close} closes it. */
    public static ServerWire server(IwarpStack stack, MpaSettings mpa, boolean ownsStack) {
        return new Server(stack, mpa, ownsStack);
    }

    /** The client side on {@code stack} (not closed by the wire): MPA Rev 2, IRD 1, ORD = the read depth. */
    public static ClientWire client(IwarpStack stack) {
        return new Client(stack, null);
    }

    /** The client side with exactly these MPA settings (the read depth and CRC arguments are then ignored). */
    public static ClientWire client(IwarpStack stack, MpaSettings mpa) {
        return new Client(stack, mpa);
    }

    /**
     * One line for a negotiated MPA startup, as ping, probe, sendrecv and serve print it, e.g.
     * {@code MPA Rev 2, CRC off, IRD 1 ORD 1, MULPDU 32762}; markers (per direction, RFC 5044 §7.1.2)
     * and the RFC 6581 RTR only when in use.
     */
    public static String describe(MpaParameters p) {
        String markers = p.markersTx() && p.markersRx() ? ", markers on" : p.markersTx() ? ", markers sent only"
                : p.markersRx() ? ", markers received only" : "";
        return "MPA Rev " + p.revision() + ", CRC " + (p.crc() ? "on" : "off") + markers + ", IRD " + p.ird()
                + " ORD " + p.ord() + ", MULPDU " + p.mulpdu() + (p.peerToPeer() ? ", peer-to-peer RTR " + p.rtrType() : "");
    }

    private static Access[] map(WireAccess... access) {
        Access[] a = new Access[access.length];
        for (int i = 0; i < access.length; i++) {
            a[i] = switch (access[i]) {
                case LOCAL_WRITE -> Access.LOCAL_WRITE;
                case REMOTE_READ -> Access.REMOTE_READ;
                case REMOTE_WRITE -> Access.REMOTE_WRITE;
            };
        }
        return a;
    }

    private static final class Region implements WireRegion {
        final MemoryRegion mr;

        Region(MemoryRegion mr) {
            this.mr = mr;
        }

        @Override
        public ByteBuf memory() {
            return mr.memory();
        }

        @Override
        public int length() {
            return mr.length();
        }

        @Override
        public long remoteAddress(int offset) {
            return mr.iova() + offset;
        }

        @Override
        public int remoteHandle() {
            return mr.stag();
        }

        @Override
        public String describe() {
            return String.format("STag 0x%08x TO 0x%016x size %d", mr.stag(), remoteAddress(0), mr.length());
        }

        @Override
        public void deregister() {
            mr.deregister();
        }
    }

    /** A queue pair as a {@link WireConnection}. */
    public static final class Connection implements WireConnection {
        private final CompletionQueue sendCq = new CompletionQueue();
        private final CompletionQueue recvCq = new CompletionQueue();
        private volatile QueuePair qp;

        Connection(WireCompletionListener listener) {
            sendCq.setListener(c -> deliver(listener, c, false));
            recvCq.setListener(c -> deliver(listener, c, true));
        }

        private static void deliver(WireCompletionListener l, Completion c, boolean receive) {
            l.completed(c.wrId(), receive, c.isSuccess(), c.byteLength(), c.status());
        }

        public CompletionQueue sendCq() {
            return sendCq;
        }

        public CompletionQueue recvCq() {
            return recvCq;
        }

        /** Binds the queue pair created with {@link #sendCq()} and {@link #recvCq()}. */
        public Connection attach(QueuePair qp) {
            this.qp = qp;
            return this;
        }

        public QueuePair queuePair() {
            return qp;
        }

        @Override
        public void postRecv(long wrId, WireRegion local, int offset, int length) {
            qp.postRecv(RecvRequest.of(wrId, ((Region) local).mr.slice(offset, length)));
        }

        @Override
        public void postSend(long wrId, WireRegion local, int offset, int length) {
            qp.postSend(SendRequest.send(wrId, ((Region) local).mr.slice(offset, length)));
        }

        @Override
        public void postRdmaRead(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                                 int remoteHandle) {
            qp.postSend(SendRequest.rdmaRead(wrId, ((Region) local).mr.slice(offset, length), remoteHandle,
                    remoteAddress));
        }

        @Override
        public void postRdmaWrite(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                                  int remoteHandle) {
            qp.postSend(SendRequest.rdmaWrite(wrId, ((Region) local).mr.slice(offset, length), remoteHandle,
                    remoteAddress));
        }

        @Override
        public Channel channel() {
            return qp.channel();
        }

        @Override
        public void whenEstablished(Runnable action) {
            qp.established().addListener((Future<QueuePair> f) -> {
                if (f.isSuccess()) {
                    action.run();
                }
            });
        }

        @Override
        public String parameters() {
            return isMpa() ? describe(mpaParameters()) : qp.connectionParameters().toString();
        }

        @Override
        public String summary() {
            if (!isMpa()) {
                return qp.connectionParameters().framingName(); // e.g. SCTP: no CRC of its own
            }
            MpaParameters p = mpaParameters();
            return "MPA Rev " + p.revision() + " CRC " + (p.crc() ? "on" : "off");
        }

        @Override
        public boolean crc() {
            return isMpa() && mpaParameters().crc();
        }

        private boolean isMpa() {
            return qp.connectionParameters().isFraming(MpaParameters.class);
        }

        @Override
        public int readDepth() {
            return qp.connectionParameters().ord();
        }

        @Override
        public byte[] peerData() {
            return qp.connectionParameters().peerPrivateData();
        }

        /** The negotiated MPA parameters. */
        public MpaParameters mpaParameters() {
            return qp.connectionParameters().framing(MpaParameters.class);
        }
    }

    private static final class Server implements ServerWire {
        private final IwarpStack stack;
        private final MpaSettings mpa;
        private final boolean ownsStack;

        Server(IwarpStack stack, MpaSettings mpa, boolean ownsStack) {
            this.stack = stack;
            this.mpa = mpa;
            this.ownsStack = ownsStack;
        }

        @Override
        public String name() {
            return "iwarp";
        }

        @Override
        public WireDomain allocDomain() {
            return domain(stack.allocPd());
        }

        @Override
        public Listener listen(InetSocketAddress local, Consumer<WireConnectRequest> requests) throws Exception {
            Channel ch = stack.listen(local, mpa, r -> requests.accept(new Request(r)));
            return new Listener() {
                @Override
                public InetSocketAddress localAddress() {
                    return (InetSocketAddress) ch.localAddress();
                }

                @Override
                public void close() {
                    ch.close().syncUninterruptibly();
                }
            };
        }

        @Override
        public String describe() {
            return stack.transport().name().toLowerCase() + " transport), MPA Rev " + mpa.revision() + ", CRC "
                    + (mpa.crc() ? "forced" : "as the client asks") + ", IRD " + mpa.ird() + " ORD " + mpa.ord();
        }

        @Override
        public void close() {
            if (ownsStack) {
                stack.close();
            }
        }
    }

    private static final class Request implements WireConnectRequest {
        private final IwarpConnectionRequest request;

        Request(IwarpConnectionRequest request) {
            this.request = request;
        }

        @Override
        public Channel channel() {
            return request.channel();
        }

        @Override
        public WireConnection accept(WireDomain domain, WireCompletionListener listener, byte[] setupData) {
            Connection c = new Connection(listener);
            ProtectionDomain pd = pdOf(domain);
            return c.attach(request.accept(pd, c.sendCq, c.recvCq, setupData));
        }

        @Override
        public void reject() {
            request.reject(new byte[0]);
        }
    }

    static ProtectionDomain pdOf(WireDomain domain) {
        if (domain instanceof Domain d) {
            return d.pd;
        }
        throw new IllegalArgumentException("not an iWARP domain: " + domain);
    }

    private record Domain(ProtectionDomain pd) implements WireDomain {
        @Override
        public WireRegion register(ByteBuf memory, WireAccess... access) {
            return new Region(pd.register(memory, map(access)));
        }
    }

    private static final class Client implements ClientWire {
        private final IwarpStack stack;
        private final MpaSettings fixed;

        Client(IwarpStack stack, MpaSettings fixed) {
            this.stack = stack;
            this.fixed = fixed;
        }

        @Override
        public String name() {
            return "iwarp";
        }

        @Override
        public WireDomain allocDomain() {
            return domain(stack.allocPd());
        }

        @Override
        public WireConnection connect(InetSocketAddress server, WireDomain domain, boolean crc, int readDepth,
                                      WireCompletionListener listener, Consumer<WireConnection> beforeStartup,
                                      long timeoutMs) throws IOException {
            MpaSettings mpa = fixed != null ? fixed
                    : MpaSettings.builder().revision(2).crc(crc).ird(1).ord(Math.max(1, Math.min(readDepth, 128)))
                    .build();
            Connection c = new Connection(listener);
            ConnectOptions opts = ConnectOptions.of(pdOf(domain)).mpa(mpa).completionQueues(c.sendCq, c.recvCq)
                    .beforeStartup(qp -> beforeStartup.accept(c.attach(qp)));
            try {
                return c.attach(stack.connect(server, opts).get(timeoutMs, TimeUnit.MILLISECONDS));
            } catch (ExecutionException e) {
                throw new IOException("cannot connect to " + server + ": " + e.getCause().getMessage(), e.getCause());
            } catch (TimeoutException e) {
                throw new IOException("cannot connect to " + server + ": no MPA Reply within " + timeoutMs + " ms", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted connecting to " + server, e);
            }
        }

        @Override
        public void close() {
            // the stack belongs to the caller
        }
    }
}
