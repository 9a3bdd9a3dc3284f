package dev.iwarp.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Groups captured TCP segments into connections and reassembles each direction's byte stream.
 *
 * <p>Connections are identified by their 4-tuple and listed in order of first appearance; a new
 * SYN (without ACK) on a 4-tuple whose earlier connection already carried other segments from the
 * SYN's sender starts a new connection (port reuse), a retransmitted SYN does not.
 *
 * <p>Reassembly works on sequence numbers, modulo 2<sup>32</sup> (so streams may cross the wrap):
 * retransmitted and overlapping bytes are taken once, the first captured copy winning, and
 * out-of-order segments are held until the hole before them is filled. Payload on RST segments is
 * ignored. Bytes after a hole that never gets filled are left out and mark the stream
 * {@linkplain TcpStream#complete() incomplete}.
 */
public final class TcpStreams {

    private TcpStreams() {
    }

    /** Reads a capture file and returns its TCP connections, in order of first appearance. */
    public static List<TcpConnection> of(Path pcap) throws IOException {
        return of(Pcap.read(pcap).tcpSegments());
    }

    /** Returns the TCP connections of these segments (in capture order), in order of first appearance. */
    public static List<TcpConnection> of(List<TcpSegment> segments) {
        List<List<TcpSegment>> groups = new ArrayList<>();
        Map<String, List<TcpSegment>> current = new HashMap<>();
        for (TcpSegment s : segments) {
            String from = endpoint(s, true);
            String to = endpoint(s, false);
            String key = from.compareTo(to) <= 0 ? from + " " + to : to + " " + from;
            List<TcpSegment> group = current.get(key);
            if (group == null || startsNewConnection(group, s)) {
                group = new ArrayList<>();
                groups.add(group);
                current.put(key, group);
            }
            group.add(s);
        }
        List<TcpConnection> connections = new ArrayList<>();
        for (List<TcpSegment> group : groups) {
            connections.add(connection(group));
        }
        return connections;
    }

    private static String endpoint(TcpSegment s, boolean source) {
        return source ? s.src().getHostAddress() + "/" + s.srcPort() : s.dst().getHostAddress() + "/" + s.dstPort();
    }

    private static boolean isPureSyn(TcpSegment s) {
        return s.isSyn() && !s.isAck();
    }

    private static boolean startsNewConnection(List<TcpSegment> group, TcpSegment s) {
        if (!isPureSyn(s)) {
            return false;
        }
        String sender = endpoint(s, true);
        for (TcpSegment earlier : group) {
            boolean sameSender = endpoint(earlier, true).equals(sender);
            boolean sameSyn = isPureSyn(earlier) && earlier.seq() == s.seq();
            if (sameSender && !sameSyn) {
                return true;
            }
        }
        return false;
    }

    private static TcpConnection connection(List<TcpSegment> group) {
        // Orient a segment of the group client -> server: the SYN, else the SYN-ACK reversed, else the first.
        TcpSegment first = group.get(0);
        boolean reversed = false;
        TcpSegment syn = group.stream().filter(TcpStreams::isPureSyn).findFirst()
                .orElse(group.stream().filter(TcpSegment::isSyn).findFirst().orElse(null));
        if (syn != null) {
            first = syn;
            reversed = syn.isAck();
        }
        InetAddress clientAddress = reversed ? first.dst() : first.src();
        int clientPort = reversed ? first.dstPort() : first.srcPort();
        InetAddress serverAddress = reversed ? first.src() : first.dst();
        int serverPort = reversed ? first.srcPort() : first.dstPort();

        List<TcpSegment> up = new ArrayList<>();
        List<TcpSegment> down = new ArrayList<>();
        for (TcpSegment s : group) {
            boolean fromClient = s.srcPort() == clientPort && s.src().equals(clientAddress);
            (fromClient ? up : down).add(s);
        }
        return new TcpConnection(clientAddress, clientPort, serverAddress, serverPort,
                group, reassemble(up), reassemble(down));
    }

    private record Piece(int frame, long offset, byte[] data) {
        long end() {
            return offset + data.length;
        }
    }

    private static TcpStream reassemble(List<TcpSegment> segments) {
        if (segments.isEmpty()) {
            return new TcpStream(new byte[0], List.of(), List.of(), true);
        }
        long base = segments.get(0).seq(); // sequence number of stream offset 0
        for (TcpSegment s : segments) {
            if (s.isSyn()) {
                base = s.seq() + 1;
                break;
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<TcpStream.Chunk> chunks = new ArrayList<>();
        List<Piece> pending = new ArrayList<>(); // in capture order, so the first copy wins
        for (TcpSegment s : segments) {
            if (s.length() == 0 || s.isRst()) {
                continue;
            }
            long dataSeq = s.seq() + (s.isSyn() ? 1 : 0);
            long assembled = out.size();
            // Distance from the next expected sequence number, as a signed 32-bit value: survives wrap.
            long offset = assembled + (int) (dataSeq - base - assembled);
            pending.add(new Piece(s.frame(), offset, s.payload()));
            while (true) { // append every piece that now touches the end, earliest captured first
                Piece p = null;
                for (Piece candidate : pending) {
                    if (candidate.offset() <= out.size()) {
                        p = candidate;
                        break;
                    }
                }
                if (p == null) {
                    break;
                }
                pending.remove(p);
                long have = out.size();
                if (p.end() > have) {
                    int skip = (int) (have - p.offset());
                    out.write(p.data(), skip, p.data().length - skip);
                    chunks.add(new TcpStream.Chunk(p.frame(), have, p.data().length - skip));
                }
            }
        }
        return new TcpStream(out.toByteArray(), chunks, segments, pending.isEmpty());
    }
}
