package dev.iwarp.server.wire;

import dev.iwarp.bootstrap.IftFraming;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.ListenOptions;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.bootstrap.tls.TlsLayer;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.CompletionView;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.PeerActivity;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.Sge;
import io.netty.channel.Channel;
import io.netty.util.concurrent.Future;

/**
 * The iWARP adapter: the wire-neutral shapes over {@code IwarpStack} and the verbs API of rdmap-codec, over any
 * {@link WireFraming} (MPA; IFT and SCTP, whose setup data travels as serve's first Send, see {@link SetupMessage}).
 * The listening side is {@link IwarpServerWire}, the connecting side {@link IwarpClientWire}; both hand out a
 * {@link Connection}.
 */
public final class IwarpWire {
    private IwarpWire() {
    }

    /** A verbs protection domain as a {@link WireDomain}. */
    public static WireDomain domain(ProtectionDomain pd) {
        return new IwarpDomain(pd);
    }

    /** The verbs region behind a {@link WireRegion} of this wire. */
    public static MemoryRegion memoryRegion(WireRegion r) {
        return ((IwarpRegion) r).mr;
    }

    /** A connection whose completion queues feed {@code listener}; {@link Connection#attach} its queue pair. */
    public static Connection connection(WireCompletionListener listener) {
        return new Connection(listener);
    }

    /**
     * {@code serve}'s listening side on {@code stack} as the options' framing's Responder (MPA, IFT or SCTP), inside TLS
     * when the options say so (their accept hook runs before the one given to {@link ServerWire#listen});
     * {@code ownsStack}: closing the wire closes the stack.
     */
    public static ServerWire server(IwarpStack stack, ListenOptions options, boolean ownsStack) {
        return new IwarpServerWire(stack, options, ownsStack);
    }

    /** The client side on {@code stack} (not closed by the wire): MPA Rev 2, IRD 1, ORD = the read depth. */
    public static ClientWire client(IwarpStack stack) {
        return new IwarpClientWire(stack, WireFraming.MPA, null, null);
    }

    /** The client side inside TLS with {@code tls} (plain TCP when null); {@code mpa} null: as {@link #client(IwarpStack)}. */
    public static ClientWire client(IwarpStack stack, MpaSettings mpa, TlsSettings tls) {
        return new IwarpClientWire(stack, WireFraming.MPA, mpa == null ? null : MpaFraming.of(mpa), tls);
    }

    /** The client side with exactly these MPA settings (the read depth and CRC arguments are then ignored). */
    public static ClientWire client(IwarpStack stack, MpaSettings mpa) {
        return new IwarpClientWire(stack, WireFraming.MPA, MpaFraming.of(mpa), null);
    }

    /**
     * The client side over IFT: node A with these settings (the CRC argument of connect is ignored), IRD 1
     * and ORD = the read depth capped at {@link IftFraming#DEFAULT_DEPTH} (serve's default IRD: IFT
     * negotiates neither).
     */
    public static ClientWire client(IwarpStack stack, IftFraming ift) {
        return new IwarpClientWire(stack, WireFraming.IFT, ift, null);
    }

    /**
     * The negotiation line of any framing ({@link WireFraming}): {@link #describe(MpaParameters)}, {@link IftWire#describe};
     * for MPA with the MULPDU in effect now, which follows the path's EMSS after startup (RFC 5044 §4.5).
     */
    public static String describe(LlpParameters p) {
        WireFraming f = WireFraming.of(p);
        return f != null ? f.describe(p) : p.toString();
    }

    /**
     * One line for a negotiated MPA startup, as ping, probe, sendrecv and serve print it, e.g.
     * {@code MPA Rev 2, CRC off, IRD 1 ORD 1, MULPDU 32762}; markers (per direction, RFC 5044 §7.1.2)
     * and the RFC 6581 RTR only when in use.
     */
    public static String describe(MpaParameters p) {
        return describe(p, p.mulpdu());
    }

    static String describe(MpaParameters p, int mulpdu) {
        String markers = p.markersTx() && p.markersRx() ? ", markers on" : p.markersTx() ? ", markers sent only"
                : p.markersRx() ? ", markers received only" : "";
        return "MPA Rev " + p.revision() + ", CRC " + (p.crc() ? "on" : "off") + markers + ", IRD " + p.ird()
                + " ORD " + p.ord() + ", MULPDU " + mulpdu + (p.peerToPeer() ? ", peer-to-peer RTR " + p.rtrType() : "");
    }

    /** A queue pair as a {@link WireConnection}. */
    public static final class Connection implements WireConnection {
        /** Kinds of send-queue request, as {@link #lastSent} indexes them. */
        private static final int SEND = 0;
        private static final int READ = 2;
        private static final int WRITE = 4;
        private final CompletionQueue sendCq = new CompletionQueue();
        private final CompletionQueue recvCq = new CompletionQueue();
        volatile QueuePair qp;
        /**
         * A framing without private data (IFT, SCTP): serve's setup message on this connection, whose completions
         * the listener never sees.
         */
        volatile SetupMessage setup;
        volatile byte[] setupData;
        /**
         * The last request of each kind posted, posted again when the next one is the same: bench and serve
         * post the same requests again and again (no object per post). Requests are immutable, so one
         * made on another thread may be posted again.
         */
        private RecvRequest lastRecv;
        /**
         * The same for the send queue: at {@code kind + 1} signaled, at {@code kind} unsignaled (selective
         * signaling alternates the two), for {@link #SEND}, {@link #READ} and {@link #WRITE}.
         */
        private final SendRequest[] lastSent = new SendRequest[6];
        /**
         * Sends (signaled, unsignaled) and receives posted before, by wrId, from the first that differed from the
         * last one on (a ring).
         */
        private ReuseTable<SendRequest> sends;
        private ReuseTable<SendRequest> quietSends;
        private ReuseTable<RecvRequest> recvs;

        Connection(WireCompletionListener listener) {
            // the listener takes the fields it needs: no object per completion
            sendCq.setReusingListener(c -> deliver(listener, c, false));
            recvCq.setReusingListener(c -> deliver(listener, c, true));
        }

        private void deliver(WireCompletionListener l, CompletionView c, boolean receive) {
            SetupMessage s = setup;
            if (s == null || !s.consume(c)) {
                l.completed(c.wrId(), receive, c.isSuccess(), c.byteLength(), c.status());
            } else if (s.sends()) {
                setup = null; // its one completion came: an idle connection keeps nothing of it
            }
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
            Sge sge = ((IwarpRegion) local).sge(offset, length);
            RecvRequest r = lastRecv;
            if (r == null || r.wrId() != wrId || r.sge() != sge) {
                ReuseTable<RecvRequest> t = recvs != null || r == null ? recvs : (recvs = new ReuseTable<>());
                r = t == null ? null : t.get(wrId);
                if (r == null || r.wrId() != wrId || r.sge() != sge) {
                    r = RecvRequest.of(wrId, sge);
                    if (t != null) {
                        t.put(wrId, r);
                    }
                }
                lastRecv = r;
            }
            qp.postRecv(r);
        }

        @Override
        public boolean signalsSelectively() {
            return true;
        }

        @Override
        public void postSend(long wrId, WireRegion local, int offset, int length) {
            postSend(wrId, local, offset, length, true);
        }

        @Override
        public void postSend(long wrId, WireRegion local, int offset, int length, boolean signaled) {
            post(SEND, wrId, ((IwarpRegion) local).sge(offset, length), 0, 0, signaled);
        }

        @Override
        public void postRdmaRead(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                                 int remoteHandle) {
            postRdmaRead(wrId, local, offset, length, remoteAddress, remoteHandle, true);
        }

        @Override
        public void postRdmaRead(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                                 int remoteHandle, boolean signaled) {
            post(READ, wrId, ((IwarpRegion) local).sge(offset, length), remoteHandle, remoteAddress, signaled);
        }

        @Override
        public void postRdmaWrite(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                                  int remoteHandle) {
            postRdmaWrite(wrId, local, offset, length, remoteAddress, remoteHandle, true);
        }

        @Override
        public void postRdmaWrite(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                                  int remoteHandle, boolean signaled) {
            post(WRITE, wrId, ((IwarpRegion) local).sge(offset, length), remoteHandle, remoteAddress, signaled);
        }

        /** Posts the request of {@code kind} with these fields, the last one of its kind again if it is the same. */
        private void post(int kind, long wrId, Sge sge, int remoteStag, long remoteTo, boolean signaled) {
            int at = kind + (signaled ? 1 : 0);
            SendRequest r = lastSent[at];
            if (!same(r, wrId, sge, remoteStag, remoteTo, signaled)) {
                ReuseTable<SendRequest> t = null;
                if (kind == SEND) { // a ring of slots: kept by wrId from the second request on
                    t = signaled ? sends : quietSends;
                    if (t == null && r != null) {
                        t = new ReuseTable<>();
                        if (signaled) {
                            sends = t;
                        } else {
                            quietSends = t;
                        }
                    }
                }
                r = t == null ? null : t.get(wrId);
                if (!same(r, wrId, sge, remoteStag, remoteTo, signaled)) {
                    r = switch (kind) {
                        case SEND -> SendRequest.send(wrId, sge);
                        case READ -> SendRequest.rdmaRead(wrId, sge, remoteStag, remoteTo);
                        default -> SendRequest.rdmaWrite(wrId, sge, remoteStag, remoteTo);
                    };
                    r = signaled ? r : r.unsignaled();
                    if (t != null) {
                        t.put(wrId, r);
                    }
                }
                lastSent[at] = r;
            }
            qp.postSend(r);
        }

        private static boolean same(SendRequest r, long wrId, Sge sge, int remoteStag, long remoteTo,
                                    boolean signaled) {
            return r != null && r.wrId() == wrId && r.local() == sge && r.remoteStag() == remoteStag
                    && r.remoteTo() == remoteTo && r.isSignaled() == signaled;
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
            String tls = TlsLayer.describe(qp.channel());
            return describe(qp.connectionParameters()) + (tls != null ? ", inside " + tls : "");
        }

        @Override
        public String summary() {
            LlpParameters llp = qp.connectionParameters();
            WireFraming f = WireFraming.of(llp);
            return f != null ? f.summary(llp) : llp.framingName();
        }

        @Override
        public boolean crc() {
            LlpParameters llp = qp.connectionParameters();
            WireFraming f = WireFraming.of(llp);
            return f != null && f.crc(llp);
        }

        /** Closes the queue pair (requests already posted are sent first, RFC 5040 §6.2.1), then the channel. */
        @Override
        public void closeGracefully(long timeoutMs) {
            if (qp != null) {
                qp.close().awaitUninterruptibly(timeoutMs);
            }
            WireConnection.super.closeGracefully(timeoutMs);
        }

        @Override
        public int readDepth() {
            return qp.connectionParameters().ord();
        }

        @Override
        public byte[] peerData() {
            return setupData != null ? setupData.clone() : qp.connectionParameters().peerPrivateData();
        }

        @Override
        public String peerError() {
            TerminateMessage t = qp.peerTerminate();
            return t == null ? null : "Terminate " + t.describe();
        }

        @Override
        public String peerActivity() {
            return qp == null ? null : qp.peerActivity().toString();
        }

        @Override
        public long peerOctetsMoved() {
            if (qp == null) {
                return -1;
            }
            PeerActivity a = qp.peerActivity();
            return a.writeOctets() + a.readOctets() + a.sendOctets();
        }

        /** The negotiated MPA parameters. */
        public MpaParameters mpaParameters() {
            return qp.connectionParameters().framing(MpaParameters.class);
        }
    }
}
