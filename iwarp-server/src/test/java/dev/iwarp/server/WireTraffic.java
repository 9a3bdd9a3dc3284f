package dev.iwarp.server;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.mpa.RtrType;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcOpcode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The traffic of the wire check ({@code interop/wire-check.sh}): through the real
 * stack ({@link IwarpStack} connect and listen over TCP on 127.0.0.1), one connection per MPA variant,
 * each carrying every RDMAP message our stack sends: RDMA Write (one and three segments), RDMA Read
 * Request and Read Response, the four Sends (and a three-segment Send), RFC 7306 Immediate Data (with and
 * without SE) and Atomic Request/Response (FetchAdd, Swap, CmpSwap), and last a Terminate provoked
 * with a deliberately bad request.
 *
 * <p>For every MPA Request/Reply and every FPDU it means to send, in each direction, it writes one
 * line of expectations, computed from the requests it posts and the RFCs' rules, never read back from
 * the stack's encoders: DDP segmentation at MULPDU (RFC 5041 §5.2), MSN from 1 per queue and MO
 * (RFC 5041 §5.3), QN per message type (RFC 5040 §4.2, RFC 7306 §8), the Terminate's headers (RFC 5040
 * §4.7) and the startup frames (RFC 5044 §7.1, RFC 6581 §3-§4). {@code interop/WireCheck.java} holds
 * Wireshark's decoding of the capture against these lines.
 *
 * <p>It also checks every completion (data read back, invalidations, immediate data, atomic
 * originals, the Terminate's error), so the traffic is known to have done what it says.
 *
 * <pre>
 * java -cp iwarp-server.jar:test-classes dev.iwarp.server.WireTraffic --port 27400 --out expect.tsv
 * </pre>
 * Output format (tab separated; '#' lines are comments):
 * <pre>
 * conn  VARIANT  CLIENT_PORT  SERVER_PORT  markers_c2s=0|1  markers_s2c=0|1  description
 * pdu   VARIANT  c2s|s2c  INDEX  MPA_Request|MPA_Reply|FPDU  name=value ...
 * </pre>
 */
public final class WireTraffic {
    /** MPA key octets (RFC 5044 §7.1). */
    static final String REQ_KEY = "MPA ID Req Frame";
    static final String REP_KEY = "MPA ID Rep Frame";
    /** DDP header lengths (RFC 5041 §4.3, §4.4). */
    static final int TAGGED_HEADER = 14;
    static final int UNTAGGED_HEADER = 18;
    /** RDMAP OpCodes (RFC 5040 §4.2, RFC 7306 §8). */
    static final int RDMA_WRITE = 0x0, READ_REQUEST = 0x1, READ_RESPONSE = 0x2, SEND = 0x3, SEND_INV = 0x4,
            SEND_SE = 0x5, SEND_SE_INV = 0x6, TERMINATE = 0x7, IMMEDIATE = 0x8, IMMEDIATE_SE = 0x9,
            ATOMIC_REQUEST = 0xA, ATOMIC_RESPONSE = 0xB;
    /** Untagged queues (RFC 5040 §4.2 / §5; RFC 7306 §8). */
    static final int QN_SEND = 0, QN_READ = 1, QN_TERMINATE = 2, QN_ATOMIC_RESPONSE = 3;
    static final int IRD = 8, ORD = 8;
    /** Base TO of the server's target region, so that the TOs in the expectations are readable. */
    static final long TARGET_IOVA = 0x0000_5a5a_0000_0000L;
    static final long SINK_IOVA = 0x0000_c1c1_0000_0000L;
    static final int TARGET_SIZE = 256 * 1024;
    static final int RECEIVES = 8;
    static final int RECV_SIZE = 80 * 1024;
    static final long TIMEOUT_MS = 10_000;

    /** How the last request of a connection provokes the server's Terminate. */
    enum Provoke {
        /** RDMA Write to the STag a Send with Invalidate invalidated: DDP tagged Invalid STag (RFC 5041 §7.2). */
        WRITE_INVALID_STAG,
        /** RDMA Read of the invalidated STag: RDMAP Remote Protection Error, Invalid STag (RFC 5040 §7.2). */
        READ_INVALID_STAG,
        /** A Send with no receive posted: DDP untagged, Invalid MSN - no buffer available (RFC 5041 §7.2). */
        SEND_NO_BUFFER
    }

    /** One connection: the MPA settings of both ends and the Terminate it ends with. */
    record Variant(String name, int revision, boolean crc, boolean markersToServer, boolean markersToClient,
                   RtrType rtr, Provoke provoke) {
        String describe() {
            return "MPA Rev " + revision + ", CRC " + (crc ? "on" : "off") + ", markers c2s "
                    + (markersToServer ? "on" : "off") + " s2c " + (markersToClient ? "on" : "off")
                    + (rtr != null ? ", peer-to-peer " + rtr + " RTR" : "") + ", ends with " + provoke;
        }
    }

    static final List<Variant> VARIANTS = List.of(
            new Variant("rev2-crc-off", 2, false, false, false, null, Provoke.WRITE_INVALID_STAG),
            new Variant("rev2-crc-on", 2, true, false, false, null, Provoke.READ_INVALID_STAG),
            new Variant("markers-crc-on", 2, true, true, true, null, Provoke.SEND_NO_BUFFER),
            new Variant("markers-crc-off", 2, false, true, true, null, Provoke.READ_INVALID_STAG),
            new Variant("markers-c2s-only", 2, true, true, false, null, Provoke.WRITE_INVALID_STAG),
            new Variant("rev1-crc-on", 1, true, false, false, null, Provoke.SEND_NO_BUFFER),
            new Variant("p2p-write-rtr", 2, true, false, false, RtrType.WRITE, Provoke.WRITE_INVALID_STAG),
            new Variant("p2p-read-rtr", 2, false, false, false, RtrType.READ, Provoke.READ_INVALID_STAG),
            new Variant("p2p-send-rtr", 2, true, false, false, RtrType.SEND, Provoke.SEND_NO_BUFFER));

    private WireTraffic() {
    }

    public static void main(String[] args) throws Exception {
        int port = 27400;
        Path out = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port" -> port = Integer.parseInt(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                default -> {
                    System.err.println("usage: WireTraffic [--port FIRST] --out FILE");
                    System.exit(2);
                }
            }
        }
        if (out == null) {
            System.err.println("usage: WireTraffic [--port FIRST] --out FILE");
            System.exit(2);
        }
        List<String> failures = run(port, out);
        failures.forEach(f -> System.err.println("wire-traffic: FAILED " + f));
        System.exit(failures.isEmpty() ? 0 : 1);
    }

    /**
     * Listens on {@code firstPort} + i for variant i (ephemeral ports when {@code firstPort} is 0), runs
     * every variant, writes {@code out}; returns the failures.
     */
    static List<String> run(int firstPort, Path out) throws Exception {
        List<String> failures = new ArrayList<>();
        List<Expectations> all = new ArrayList<>();
        try (IwarpStack server = IwarpStack.builder().threads(1).build();
             IwarpStack client = IwarpStack.builder().threads(1).build()) {
            for (int i = 0; i < VARIANTS.size(); i++) {
                Variant v = VARIANTS.get(i);
                try {
                    all.add(new Connection(v, server, client, firstPort == 0 ? 0 : firstPort + i).run());
                } catch (Exception | AssertionError e) {
                    failures.add(v.name() + ": " + e);
                }
            }
        }
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8))) {
            w.println("# wire-check expectations, written by dev.iwarp.server.WireTraffic; one line per MPA"
                    + " startup frame and per FPDU, in stream order per direction");
            for (Expectations e : all) {
                e.write(w);
            }
        }
        return failures;
    }

    /** The expected PDUs of one connection, per direction, in stream order. */
    static final class Expectations {
        final Variant variant;
        int clientPort;
        int serverPort;
        final List<Map<String, String>> c2s = new ArrayList<>();
        final List<Map<String, String>> s2c = new ArrayList<>();
        /** Next transmit MSN per untagged queue and direction (RFC 5041 §5.3: the first message has MSN 1). */
        private final int[] msnC2s = {1, 1, 1, 1};
        private final int[] msnS2c = {1, 1, 1, 1};

        Expectations(Variant variant) {
            this.variant = variant;
        }

        List<Map<String, String>> dir(boolean toServer) {
            return toServer ? c2s : s2c;
        }

        int nextMsn(boolean toServer, int qn) {
            int[] m = toServer ? msnC2s : msnS2c;
            return m[qn]++;
        }

        Map<String, String> add(boolean toServer, String kind) {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("kind", kind);
            dir(toServer).add(m);
            return m;
        }

        /** A startup frame (RFC 5044 §7.1; RFC 6581 §3-§4 for the IRD/ORD words of Rev 2). */
        void startup(boolean request, boolean markers, boolean crc, byte[] ulpPrivateData, int ird, int ord,
                     boolean p2p, RtrType... rtr) {
            Map<String, String> m = add(request, request ? "MPA_Request" : "MPA_Reply");
            m.put("Key", hex(request ? REQ_KEY.getBytes(StandardCharsets.US_ASCII)
                    : REP_KEY.getBytes(StandardCharsets.US_ASCII)));
            m.put("M", bit(markers));
            m.put("C", bit(crc));
            m.put("R", "0");
            // RFC 6581 §3: the Enhanced bit (0x10 of the flags octet, "Res" before it) marks the IRD/ORD words
            m.put("Res", variant.revision() == 2 ? "0x10" : "0x00");
            m.put("Rev", Integer.toString(variant.revision()));
            ByteBuf pd = Unpooled.buffer();
            if (variant.revision() == 2) {
                int irdWord = (p2p ? 0x8000 : 0) | (contains(rtr, RtrType.SEND) ? 0x4000 : 0) | ird;
                int ordWord = (contains(rtr, RtrType.WRITE) ? 0x8000 : 0) | (contains(rtr, RtrType.READ) ? 0x4000 : 0)
                        | ord;
                pd.writeShort(irdWord).writeShort(ordWord);
            }
            pd.writeBytes(ulpPrivateData);
            m.put("PD_Length", Integer.toString(pd.readableBytes()));
            m.put("Private_Data", hex(ByteBufBytes.of(pd)));
        }

        /** Common MPA/DDP/RDMAP fields of one FPDU. */
        private Map<String, String> fpdu(boolean toServer, int opcode, boolean tagged, boolean last, int ulpduLength) {
            Map<String, String> m = add(toServer, "FPDU");
            m.put("OpCode", String.format("0x%x", opcode));
            m.put("RV", "1");
            m.put("T", bit(tagged));
            m.put("L", bit(last));
            m.put("DV", "1");
            m.put("ULPDU_Length", Integer.toString(ulpduLength));
            m.put("CRC", variant.crc() ? "good" : "zero");
            return m;
        }

        /** A tagged message cut at MULPDU (RFC 5041 §5.2): TO advances, L on the last segment only. */
        void tagged(boolean toServer, int opcode, int stag, long to, int length, int mulpdu) {
            int max = mulpdu - TAGGED_HEADER;
            int off = 0;
            do {
                int n = Math.min(max, length - off);
                Map<String, String> m = fpdu(toServer, opcode, true, off + n == length, TAGGED_HEADER + n);
                m.put("STag", hex32(stag));
                m.put("TO", hex64(to + off));
                off += n;
            } while (off < length);
        }

        /** An untagged message on {@code qn} with the queue's next MSN, cut at MULPDU: MO advances. */
        List<Map<String, String>> untagged(boolean toServer, int opcode, int qn, int invalidateStag, int length,
                                           int mulpdu) {
            int msn = nextMsn(toServer, qn);
            int max = mulpdu - UNTAGGED_HEADER;
            List<Map<String, String>> segs = new ArrayList<>();
            int off = 0;
            do {
                int n = Math.min(max, length - off);
                Map<String, String> m = fpdu(toServer, opcode, false, off + n == length, UNTAGGED_HEADER + n);
                m.put("QN", Integer.toString(qn));
                m.put("MSN", Integer.toString(msn));
                m.put("MO", Integer.toString(off));
                if (opcode == SEND_INV || opcode == SEND_SE_INV) {
                    m.put("Invalidate_STag", hex32(invalidateStag));
                }
                // RsvdULP[0:39] (RFC 5041 §4.4): RDMAP control (RV 1, RFC 5040 §4.1), then the
                // Invalidate STag or zero
                m.put("RsvdULP", String.format("%02x%08x", 0x40 | opcode, invalidateStag));
                segs.add(m);
                off += n;
            } while (off < length);
            return segs;
        }

        /**
         * Adds each FPDU's markers (RFC 5044 §4.3): with markers on in that direction, one
         * at every 512th octet of the stream after the sender's startup frame, each holding FPDUPTR, the
         * distance back to its FPDU's first octet (0 for a marker that starts an FPDU; a marker due
         * right after the PAD belongs to the FPDU before its CRC). "none" when the FPDU holds none.
         */
        static void addMarkers(List<Map<String, String>> dir, boolean markers) {
            long off = 0; // octets sent in full operation, from the first octet after the startup frame
            for (Map<String, String> m : dir) {
                if (!m.get("kind").equals("FPDU")) {
                    continue;
                }
                int ulpdu = Integer.parseInt(m.get("ULPDU_Length"));
                int body = 2 + ulpdu + (4 - (2 + ulpdu) % 4) % 4; // ULPDU_Length, ULPDU, PAD
                long start = off;
                List<String> ptrs = new ArrayList<>();
                int i = 0;
                while (i < body) {
                    if (markers && off % 512 == 0) {
                        ptrs.add(Long.toString(off - start));
                        off += 4;
                    }
                    int n = markers ? (int) Math.min(body - i, 512 - off % 512) : body - i;
                    i += n;
                    off += n;
                }
                if (markers && off % 512 == 0) {
                    ptrs.add(Long.toString(off - start));
                    off += 4;
                }
                off += 4; // CRC
                m.put("Markers", ptrs.isEmpty() ? "none" : String.join(",", ptrs));
            }
        }

        void write(PrintWriter w) {
            addMarkers(c2s, variant.markersToServer());
            addMarkers(s2c, variant.markersToClient());
            w.printf("conn\t%s\t%d\t%d\tmarkers_c2s=%s\tmarkers_s2c=%s\t%s%n", variant.name(), clientPort, serverPort,
                    bit(variant.markersToServer()), bit(variant.markersToClient()), variant.describe());
            for (int d = 0; d < 2; d++) {
                List<Map<String, String>> list = d == 0 ? c2s : s2c;
                for (int i = 0; i < list.size(); i++) {
                    StringBuilder sb = new StringBuilder();
                    sb.append("pdu\t").append(variant.name()).append('\t').append(d == 0 ? "c2s" : "s2c").append('\t')
                            .append(i);
                    for (Map.Entry<String, String> e : list.get(i).entrySet()) {
                        sb.append('\t');
                        if (!e.getKey().equals("kind")) {
                            sb.append(e.getKey()).append('=');
                        }
                        sb.append(e.getValue());
                    }
                    w.println(sb);
                }
            }
        }
    }

    /** Runs one variant's connection and builds its expectations. */
    static final class Connection {
        final Variant v;
        final IwarpStack serverStack;
        final IwarpStack clientStack;
        final int port;
        final Expectations x;

        Connection(Variant v, IwarpStack serverStack, IwarpStack clientStack, int port) {
            this.v = v;
            this.serverStack = serverStack;
            this.clientStack = clientStack;
            this.port = port;
            this.x = new Expectations(v);
        }

        Expectations run() throws Exception {
            // ---- server: target region, two STags to invalidate, RECEIVES receives posted before the Reply
            ProtectionDomain spd = serverStack.allocPd();
            ByteBuf targetMem = pattern(TARGET_SIZE, 7);
            ByteBuf recvMem = Unpooled.directBuffer(RECEIVES * RECV_SIZE, RECEIVES * RECV_SIZE);
            recvMem.writerIndex(recvMem.capacity());
            ByteBuf inv1Mem = Unpooled.directBuffer(32, 32);
            ByteBuf inv2Mem = Unpooled.directBuffer(32, 32);
            MemoryRegion target = spd.register(targetMem, TARGET_IOVA, Access.LOCAL_WRITE, Access.REMOTE_READ,
                    Access.REMOTE_WRITE, Access.REMOTE_ATOMIC);
            MemoryRegion recv = spd.register(recvMem, Access.LOCAL_WRITE);
            MemoryRegion inv1 = spd.register(inv1Mem, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_INVALIDATE);
            MemoryRegion inv2 = spd.register(inv2Mem, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_INVALIDATE);
            CompletionQueue sRecvCq = new CompletionQueue();
            BlockingQueue<QueuePair> accepted = new ArrayBlockingQueue<>(1);
            byte[] replyPd = ("wire-check reply " + v.name()).getBytes(StandardCharsets.US_ASCII);
            MpaSettings serverMpa = MpaSettings.builder().revision(2).crc(false).markers(v.markersToServer())
                    .acceptMarkers(true).ird(IRD).ord(ORD).acceptPeerToPeer(true).rtrTypes(RtrType.WRITE, RtrType.READ, RtrType.SEND)
                    .build();

            // ---- client
            ProtectionDomain cpd = clientStack.allocPd();
            ByteBuf srcMem = pattern(TARGET_SIZE, 3);
            ByteBuf sinkMem = Unpooled.directBuffer(4096, 4096);
            sinkMem.writerIndex(4096);
            ByteBuf resultMem = Unpooled.directBuffer(24, 24);
            resultMem.writerIndex(24);
            MemoryRegion src = cpd.register(srcMem, Access.LOCAL_WRITE);
            MemoryRegion sink = cpd.register(sinkMem, SINK_IOVA, Access.LOCAL_WRITE);
            MemoryRegion result = cpd.register(resultMem, Access.LOCAL_WRITE);
            byte[] requestPd = ("wire-check " + v.name()).getBytes(StandardCharsets.US_ASCII);
            MpaSettings.Builder cb = MpaSettings.builder().revision(v.revision()).crc(v.crc())
                    .markers(v.markersToClient()).ird(IRD).ord(ORD).privateData(requestPd);
            if (v.rtr() != null) {
                cb.peerToPeer(true).rtrTypes(v.rtr());
            }
            ConnectOptions opts = ConnectOptions.of(cpd).mpa(cb.build());
            Channel listener = null;
            try {
                listener = serverStack.listen(new InetSocketAddress("127.0.0.1", port), serverMpa, req -> {
                    QueuePair qp = req.accept(spd, new CompletionQueue(), sRecvCq, replyPd);
                    for (int i = 0; i < RECEIVES; i++) {
                        qp.postRecv(RecvRequest.of(100 + i, recv.slice(i * RECV_SIZE, RECV_SIZE)));
                    }
                    accepted.add(qp);
                });
                QueuePair qp = clientStack.connect(listener.localAddress(), opts).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                QueuePair sqp = accepted.poll(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                check(sqp != null, "server accepted");
                x.clientPort = ((InetSocketAddress) qp.channel().localAddress()).getPort();
                x.serverPort = ((InetSocketAddress) listener.localAddress()).getPort();
                MpaParameters p = qp.connectionParameters().framing(MpaParameters.class);
                check(p.revision() == v.revision() && p.crc() == v.crc() && p.markersTx() == v.markersToServer()
                        && p.markersRx() == v.markersToClient() && p.rtrType() == v.rtr(), "negotiated " + p);
                int mulpduC2s = p.mulpdu();
                int mulpduS2c = sqp.connectionParameters().framing(MpaParameters.class).mulpdu();

                // ---- startup (RFC 5044 §7.1; the Reply echoes C and the Request's Rev; RFC 6581 §3 IRD/ORD)
                x.startup(true, v.markersToClient(), v.crc(), requestPd, IRD, ORD, v.rtr() != null,
                        v.rtr() == null ? new RtrType[0] : new RtrType[]{v.rtr()});
                x.startup(false, v.markersToServer(), v.crc(), replyPd, IRD, ORD, v.rtr() != null,
                        v.rtr() == null ? new RtrType[0] : new RtrType[]{v.rtr()});

                // ---- RFC 6581 §4 RTR: the Initiator's first FPDU (siw_cm.c for the STag/TO values)
                if (v.rtr() == RtrType.WRITE) {
                    x.tagged(true, RDMA_WRITE, 1, 0, 0, mulpduC2s);
                } else if (v.rtr() == RtrType.READ) {
                    readRequest(true, 0, 0, 0, 1, 0);
                    x.tagged(false, READ_RESPONSE, 0, 0, 0, mulpduS2c);
                } else if (v.rtr() == RtrType.SEND) {
                    x.untagged(true, SEND, QN_SEND, 0, 0, mulpduC2s);
                }

                CompletionQueue scq = opts.sendCq();
                // Each request waits until the server has it (placed, received or answered) before the next
                // is posted, so every single-FPDU message travels alone in its TCP segment: Wireshark's MPA
                // dissector finds markers only in such segments (interop/README.md).
                check(sqp.established().await(TIMEOUT_MS) && sqp.established().isSuccess(), "server in RTS");
                boolean markers = v.markersToServer() || v.markersToClient();
                int maxWrite = mulpduC2s - TAGGED_HEADER;
                int maxSend = mulpduC2s - UNTAGGED_HEADER;
                long wr = 1;
                // RDMA Write (RFC 5040 §5.1): 100 octets, one full FPDU, then (without markers) three segments
                write(qp, scq, wr++, src, target, targetMem, 0, 100, mulpduC2s);
                write(qp, scq, wr++, src, target, targetMem, 4096, maxWrite, mulpduC2s);
                if (!markers) {
                    write(qp, scq, wr++, src, target, targetMem, 4096, 2 * maxWrite + 100, mulpduC2s);
                }

                // RDMA Read (RFC 5040 §5.2): Read Request on QN 1, Read Response to the sink STag/TO
                Completion c = post(qp, scq, SendRequest.rdmaRead(wr++, sink.slice(16, 200), target.stag(),
                        target.iova() + 4096));
                check(c.byteLength() == 200, "Read length");
                check(sinkMem.slice(16, 200).equals(srcMem.slice(0, 200)), "Read returned the bytes written");
                readRequest(true, sink.stag(), sink.iova() + 16, 200, target.stag(), target.iova() + 4096);
                x.tagged(false, READ_RESPONSE, sink.stag(), sink.iova() + 16, 200, mulpduS2c);

                // the four Sends (RFC 5040 §5.3), a full FPDU, then (without markers) three segments; each
                // checked at the server: length, invalidation, solicited event
                int recvIndex = 0;
                send(qp, scq, sRecvCq, recvIndex++, SendRequest.send(wr++, src.slice(0, 50)), SEND, 0, mulpduC2s);
                send(qp, scq, sRecvCq, recvIndex++, SendRequest.sendWithInvalidate(wr++, src.slice(0, 51), inv1.stag()),
                        SEND_INV, inv1.stag(), mulpduC2s);
                send(qp, scq, sRecvCq, recvIndex++, SendRequest.send(wr++, src.slice(0, 52)).solicited(), SEND_SE, 0,
                        mulpduC2s);
                send(qp, scq, sRecvCq, recvIndex++, SendRequest.sendWithInvalidate(wr++, src.slice(0, 53), inv2.stag())
                        .solicited(), SEND_SE_INV, inv2.stag(), mulpduC2s);
                check(!inv1.isValid() && !inv2.isValid(), "Send with Invalidate invalidated both STags");
                send(qp, scq, sRecvCq, recvIndex++, SendRequest.send(wr++, src.slice(0, maxSend)), SEND, 0, mulpduC2s);
                if (!markers) {
                    send(qp, scq, sRecvCq, recvIndex++, SendRequest.send(wr++, src.slice(0, 2 * maxSend + 10)), SEND, 0,
                            mulpduC2s);
                }

                // RFC 7306 Immediate Data, with and without SE: QN 0, 8 octets, consumes a receive
                immediate(qp, scq, sRecvCq, recvIndex++, wr++, 0x0123_4567_89ab_cdefL, false, mulpduC2s);
                immediate(qp, scq, sRecvCq, recvIndex++, wr++, 0xfedc_ba98_7654_3210L, true, mulpduC2s);

                // RFC 7306 atomics: Atomic Request on QN 1 (after the Read), Atomic Response on QN 3; the
                // Request Identifier is the requester's choice: ours counts from 1 per stream
                long t0 = target.iova() + 0x800;
                long orig0 = targetMem.getLong(0x800);
                long orig1 = targetMem.getLong(0x808);
                long orig2 = targetMem.getLong(0x810);
                c = post(qp, scq, SendRequest.fetchAdd(wr++, result.slice(0, 8), target.stag(), t0, 5, 0));
                check(c.immediateData() == orig0 && resultMem.getLong(0) == orig0, "FetchAdd original " + c);
                atomic(0x0, 1, target.stag(), t0, 5, 0, 0, 0, orig0);
                c = post(qp, scq, SendRequest.swap(wr++, result.slice(8, 8), target.stag(), t0 + 8, 0x1111_2222_3333_4444L,
                        -1L));
                check(c.immediateData() == orig1, "Swap original " + c);
                atomic(0x1, 2, target.stag(), t0 + 8, 0x1111_2222_3333_4444L, -1L, 0, 0, orig1);
                c = post(qp, scq, SendRequest.compareSwap(wr++, result.slice(16, 8), target.stag(), t0 + 16, orig2, -1L,
                        0x5555_6666_7777_8888L, -1L));
                check(c.immediateData() == orig2, "CmpSwap original " + c);
                atomic(0x2, 3, target.stag(), t0 + 16, 0x5555_6666_7777_8888L, -1L, orig2, -1L, orig2);
                check(targetMem.getLong(0x800) == orig0 + 5 && targetMem.getLong(0x808) == 0x1111_2222_3333_4444L
                        && targetMem.getLong(0x810) == 0x5555_6666_7777_8888L, "atomics applied");

                // the receives not used yet make the Send of SEND_NO_BUFFER find none
                if (v.provoke() == Provoke.SEND_NO_BUFFER) {
                    for (; recvIndex < RECEIVES; recvIndex++) {
                        send(qp, scq, sRecvCq, recvIndex, SendRequest.send(wr++, src.slice(0, 8)), SEND, 0, mulpduC2s);
                    }
                }
                provokeTerminate(qp, scq, wr, src, sink, inv1, mulpduC2s);
                check(qp.channel().closeFuture().await(TIMEOUT_MS), "connection closed after the Terminate");
                check(sqp.channel().closeFuture().await(TIMEOUT_MS), "server closed after the Terminate");
            } finally {
                if (listener != null) {
                    listener.close().sync();
                }
                for (MemoryRegion mr : List.of(target, recv, inv1, inv2, src, sink, result)) {
                    mr.deregister();
                }
                for (ByteBuf b : List.of(targetMem, recvMem, inv1Mem, inv2Mem, srcMem, sinkMem, resultMem)) {
                    b.release();
                }
            }
            return x;
        }

        /** RDMA Read Request (RFC 5040 §4.4): untagged, QN 1, one segment of 28 octets. */
        private void readRequest(boolean toServer, int sinkStag, long sinkTo, long size, int srcStag, long srcTo) {
            Map<String, String> m = x.untagged(toServer, READ_REQUEST, QN_READ, 0, 28, Integer.MAX_VALUE).get(0);
            m.put("Sink_STag", hex32(sinkStag));
            m.put("Sink_TO", hex64(sinkTo));
            m.put("RDMA_Read_Message_Size", Long.toString(size));
            m.put("Source_STag", hex32(srcStag));
            m.put("Source_TO", hex64(srcTo));
        }

        /** An RDMA Write of {@code length} octets at {@code offset} of the target; waits until they are placed. */
        private void write(QueuePair qp, CompletionQueue scq, long wr, MemoryRegion src, MemoryRegion target,
                           ByteBuf targetMem, int offset, int length, int mulpdu) throws InterruptedException {
            post(qp, scq, SendRequest.rdmaWrite(wr, src.slice(0, length), target.stag(), target.iova() + offset));
            x.tagged(true, RDMA_WRITE, target.stag(), target.iova() + offset, length, mulpdu);
            // segments are placed in order: the last 8 octets (different before, see pattern()) come last
            long deadline = System.currentTimeMillis() + TIMEOUT_MS;
            long tail = src.memory().getLong(length - 8);
            while (targetMem.getLong(offset + length - 8) != tail) {
                check(System.currentTimeMillis() < deadline, "RDMA Write of " + length + " octets placed");
                Thread.sleep(1);
            }
            check(targetMem.slice(offset, length).equals(src.memory().slice(0, length)), "RDMA Write placed as sent");
        }

        /** A Send variant; waits for the server's receive completion and checks it. */
        private void send(QueuePair qp, CompletionQueue scq, CompletionQueue recvCq, int recvIndex, SendRequest wr,
                          int opcode, int invalidateStag, int mulpdu) throws InterruptedException {
            post(qp, scq, wr);
            x.untagged(true, opcode, QN_SEND, invalidateStag, wr.length(), mulpdu);
            Completion r = recvCq.take(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            check(r != null && r.isSuccess() && r.wrId() == 100 + recvIndex && r.byteLength() == wr.length(),
                    "receive " + recvIndex + " of " + wr + ": " + r);
            check(r.solicited() == (opcode == SEND_SE || opcode == SEND_SE_INV), "solicited event of " + r);
            check(r.hasInvalidatedStag() == (invalidateStag != 0)
                    && (invalidateStag == 0 || r.invalidatedStag() == invalidateStag), "invalidation of " + r);
        }

        /** RFC 7306 Immediate Data; waits for the server's receive completion with the 8 octets. */
        private void immediate(QueuePair qp, CompletionQueue scq, CompletionQueue recvCq, int recvIndex, long wr,
                               long value, boolean solicited, int mulpdu) throws InterruptedException {
            SendRequest req = SendRequest.immediateData(wr, value);
            post(qp, scq, solicited ? req.solicited() : req);
            x.untagged(true, solicited ? IMMEDIATE_SE : IMMEDIATE, QN_SEND, 0, 8, mulpdu).get(0)
                    .put("Immediate_Data", hex64(value));
            Completion r = recvCq.take(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            check(r != null && r.isSuccess() && r.wrId() == 100 + recvIndex && r.opcode() == WcOpcode.RECV_IMMEDIATE
                    && r.immediateData() == value && r.solicited() == solicited, "Immediate Data received: " + r);
        }

        /** Atomic Request (QN 1, 52 octets) and its Atomic Response (QN 3, 12 octets), RFC 7306 §4.1, §4.2. */
        private void atomic(int atomOp, int id, int stag, long to, long data, long mask, long compare, long compareMask,
                            long original) {
            Map<String, String> m = x.untagged(true, ATOMIC_REQUEST, QN_READ, 0, 52, Integer.MAX_VALUE).get(0);
            m.put("AtomicOp", Integer.toString(atomOp));
            m.put("Request_Identifier", Integer.toString(id));
            m.put("Remote_STag", hex32(stag));
            m.put("Remote_TO", hex64(to));
            m.put("Add_or_Swap_Data", hex64(data));
            m.put("Add_or_Swap_Mask", hex64(mask));
            m.put("Compare_Data", hex64(compare));
            m.put("Compare_Mask", hex64(compareMask));
            Map<String, String> r = x.untagged(false, ATOMIC_RESPONSE, QN_ATOMIC_RESPONSE, 0, 12, Integer.MAX_VALUE)
                    .get(0);
            r.put("Original_Request_Identifier", Integer.toString(id));
            r.put("Original_Remote_Data_Value", hex64(original));
        }

        /**
         * The last request, which the server answers with a Terminate (RFC 5040 §4.7, §5.4: untagged,
         * QN 2, MSN 1, MO 0): the offending segment's length in DDP Segment Length (M; the whole segment,
         * header and payload: our reading of §4.7), its DDP header (D), and for a Read Request the Read
         * Request header (R).
         */
        private void provokeTerminate(QueuePair qp, CompletionQueue scq, long wr, MemoryRegion src, MemoryRegion sink,
                                      MemoryRegion invalid, int mulpdu) throws Exception {
            ByteBuf ddp = Unpooled.buffer();
            ByteBuf rdma = Unpooled.buffer();
            int layer;
            int etype;
            int code;
            int segLength;
            switch (v.provoke()) {
                case WRITE_INVALID_STAG -> {
                    qp.postSend(SendRequest.rdmaWrite(wr, src.slice(0, 40), invalid.stag(), invalid.iova()));
                    x.tagged(true, RDMA_WRITE, invalid.stag(), invalid.iova(), 40, mulpdu);
                    ddp.writeByte(0xC1).writeByte(0x40 | RDMA_WRITE).writeInt(invalid.stag()).writeLong(invalid.iova());
                    layer = 1; // DDP, Tagged Buffer Error, Invalid STag (RFC 5041 §7.2, RFC 6580 registry)
                    etype = 1;
                    code = 0;
                    segLength = TAGGED_HEADER + 40;
                }
                case READ_INVALID_STAG -> {
                    qp.postSend(SendRequest.rdmaRead(wr, sink.slice(0, 64), invalid.stag(), invalid.iova()));
                    int msn = x.msnC2s[QN_READ];
                    readRequest(true, sink.stag(), sink.iova(), 64, invalid.stag(), invalid.iova());
                    ddp.writeByte(0x41).writeByte(0x40 | READ_REQUEST).writeInt(0).writeInt(QN_READ).writeInt(msn)
                            .writeInt(0);
                    rdma.writeInt(sink.stag()).writeLong(sink.iova()).writeInt(64).writeInt(invalid.stag())
                            .writeLong(invalid.iova());
                    layer = 0; // RDMAP, Remote Protection Error, Invalid STag (RFC 5040 §7.2, RFC 6580)
                    etype = 1;
                    code = 0;
                    segLength = UNTAGGED_HEADER + 28;
                }
                default -> {
                    qp.postSend(SendRequest.send(wr, src.slice(0, 40)));
                    int msn = x.msnC2s[QN_SEND];
                    x.untagged(true, SEND, QN_SEND, 0, 40, mulpdu);
                    ddp.writeByte(0x41).writeByte(0x40 | SEND).writeInt(0).writeInt(QN_SEND).writeInt(msn).writeInt(0);
                    layer = 1; // DDP, Untagged Buffer Error, Invalid MSN - no buffer available (RFC 5041 §7.2)
                    etype = 2;
                    code = 2;
                    segLength = UNTAGGED_HEADER + 40;
                }
            }
            Completion c = scq.take(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            check(c != null && c.wrId() == wr, "completion of the provoking request: " + c);
            if (v.provoke() == Provoke.READ_INVALID_STAG) {
                check(!c.isSuccess(), "the Read of an invalid STag fails: " + c);
            }
            boolean r = rdma.isReadable();
            List<Map<String, String>> t = x.untagged(false, TERMINATE, QN_TERMINATE, 0,
                    4 + 2 + ddp.readableBytes() + rdma.readableBytes(), Integer.MAX_VALUE);
            check(t.get(0).get("MSN").equals("1"), "a stream's only Terminate has MSN 1");
            Map<String, String> m = t.get(0);
            m.put("Layer", Integer.toString(layer));
            m.put("EType", Integer.toString(etype));
            m.put("Error_Code", Integer.toString(code));
            m.put("Terminate_M", "1");
            m.put("Terminate_D", "1");
            m.put("Terminate_R", bit(r));
            m.put("DDP_Segment_Length", String.format("%04x", segLength));
            m.put("Terminated_DDP_Header", hex(ByteBufBytes.of(ddp)));
            if (r) {
                m.put("Terminated_RDMA_Header", hex(ByteBufBytes.of(rdma)));
            }
        }

        /** Posts, waits for the completion, checks it succeeded. */
        private Completion post(QueuePair qp, CompletionQueue scq, SendRequest wr) throws InterruptedException {
            qp.postSend(wr);
            Completion c = scq.take(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            check(c != null && c.isSuccess() && c.wrId() == wr.wrId(), wr + " completed: " + c);
            return c;
        }
    }

    /** The readable octets of a heap buffer. */
    static final class ByteBufBytes {
        static byte[] of(ByteBuf b) {
            byte[] a = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), a);
            b.release();
            return a;
        }
    }

    /** Octet i is {@code 31 i + seed}: the source (seed 3) and the target (seed 7) differ at every TO. */
    static ByteBuf pattern(int size, int seed) {
        byte[] a = new byte[size];
        for (int i = 0; i < size; i++) {
            a[i] = (byte) (i * 31 + seed);
        }
        return Unpooled.directBuffer(size, size).writeBytes(a);
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static boolean contains(RtrType[] types, RtrType t) {
        for (RtrType r : types) {
            if (r == t) {
                return true;
            }
        }
        return false;
    }

    static String bit(boolean b) {
        return b ? "1" : "0";
    }

    static String hex32(int v) {
        return String.format("0x%08x", v);
    }

    static String hex64(long v) {
        return String.format("0x%016x", v);
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder(b.length * 2);
        for (byte x : b) {
            sb.append(String.format("%02x", x & 0xFF));
        }
        return sb.toString();
    }
}
