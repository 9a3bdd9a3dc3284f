package dev.iwarp.testkit;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every capture in {@code shared/testdata/siw-pcap} against its tshark summary ({@code NAME.txt}):
 * connections and their per-direction frame and octet counts, every listed frame's addresses,
 * ports, flags, relative sequence numbers, length and time, the MPA Request/Reply bytes, and - by
 * walking the reassembled streams as MPA FPDUs - the RDMAP opcode counts, the frame tshark names for
 * the first of each, and the CRC field values. A reassembly or frame-mapping mistake shows up here.
 */
class SiwCapturesTest {

    @TestFactory
    Stream<DynamicTest> everyCaptureMatchesItsTsharkSummary() throws IOException {
        SharedData.assumeAvailable("the real siw captures");
        List<Path> pcaps;
        try (Stream<Path> files = Files.list(SharedData.siwPcapDir())) {
            pcaps = files.filter(p -> p.toString().endsWith(".pcap")).sorted().toList();
        }
        assertTrue(pcaps.size() >= 10, "expected the 10 siw captures, found " + pcaps);
        return pcaps.stream().map(p -> DynamicTest.dynamicTest(p.getFileName().toString(), () -> check(p)));
    }

    private static void check(Path pcapFile) throws IOException {
        Path txt = pcapFile.resolveSibling(pcapFile.getFileName().toString().replaceAll("\\.pcap$", ".txt"));
        TsharkSummary summary = TsharkSummary.read(txt);
        Pcap pcap = Pcap.read(pcapFile);
        List<TcpConnection> connections = TcpStreams.of(pcap.tcpSegments());
        assertEquals(Pcap.LINKTYPE_ETHERNET, pcap.linkType());
        assertTrue(!summary.conversations().isEmpty() && !summary.frames().isEmpty(), "summary parsed");

        checkConversations(summary, connections, pcap);
        checkFrames(summary, connections, pcap);
        checkMpaFrames(summary, connections);
        checkFpdus(summary, connections);
    }

    private static void checkConversations(TsharkSummary summary, List<TcpConnection> connections, Pcap pcap) {
        assertEquals(summary.conversations().size(), connections.size(), "connections: " + connections);
        var t0 = pcap.tcpSegments().get(0).timestamp();
        for (TsharkSummary.Conversation conv : summary.conversations()) {
            TcpConnection c = connections.stream()
                    .filter(x -> x.clientPort() == conv.portA() && x.serverPort() == conv.portB())
                    .findFirst().orElseThrow(() -> new AssertionError("no connection for " + conv + " in " + connections));
            assertEquals(conv.addressA(), c.clientAddress().getHostAddress());
            assertEquals(conv.addressB(), c.serverAddress().getHostAddress());
            TcpStream up = c.clientToServer();
            TcpStream down = c.serverToClient();
            assertEquals(conv.framesAtoB(), up.segments().size(), "frames client->server of " + c);
            assertEquals(conv.framesBtoA(), down.segments().size(), "frames server->client of " + c);
            assertTrue(conv.bytesAtoB().matches(wireOctets(up)), conv.bytesAtoB() + " vs " + wireOctets(up));
            assertTrue(conv.bytesBtoA().matches(wireOctets(down)), conv.bytesBtoA() + " vs " + wireOctets(down));
            List<TcpSegment> all = c.segments();
            assertEquals(conv.relativeStart(), seconds(Duration.between(t0, all.get(0).timestamp())), 1e-9);
            assertEquals(conv.duration(), seconds(Duration.between(all.get(0).timestamp(),
                    all.get(all.size() - 1).timestamp())), 0.00005 + 1e-9);
            // No capture has a retransmission or a hole: every payload octet is new and lands in the stream.
            for (TcpStream s : List.of(up, down)) {
                assertTrue(s.complete());
                assertEquals(s.segments().stream().mapToInt(TcpSegment::length).sum(), s.length());
                assertEquals(s.segments().stream().filter(x -> x.length() > 0).count(), s.chunks().size());
            }
        }
    }

    private static void checkFrames(TsharkSummary summary, List<TcpConnection> connections, Pcap pcap) {
        var t0 = pcap.tcpSegments().get(0).timestamp();
        for (TsharkSummary.FrameLine line : summary.frames()) {
            TcpSegment s = pcap.tcpSegments().get(line.frame() - 1); // every frame in these captures is TCP
            String what = "frame " + line.frame() + " " + s;
            assertEquals(line.frame(), s.frame(), what);
            assertEquals(line.src(), s.src().getHostAddress(), what);
            assertEquals(line.dst(), s.dst().getHostAddress(), what);
            assertEquals(line.length(), s.wireLength(), what);
            assertEquals(Math.round(line.time() * 1e6), Duration.between(t0, s.timestamp()).toNanos() / 1000, what);
            assertTrue(line.srcPort() != null || line.protocol().equals("HTTP"), "ports parsed: " + line);
            if (line.srcPort() != null) {
                assertEquals(line.srcPort(), s.srcPort(), what);
                assertEquals(line.dstPort(), s.dstPort(), what);
            }
            if (line.flags() != null) {
                assertEquals(line.flags(), flagNames(s), what);
            }
            TcpConnection c = connections.stream().filter(x -> x.segments().contains(s)).findFirst().orElseThrow();
            boolean up = c.isFromClient(s);
            long isnOut = isn(up ? c.clientToServer() : c.serverToClient());
            long isnIn = isn(up ? c.serverToClient() : c.clientToServer());
            if (line.seq() != null) {
                assertEquals(line.seq(), (s.seq() - isnOut) & 0xFFFFFFFFL, what);
            }
            if (line.ack() != null) {
                assertEquals(line.ack(), (s.ack() - isnIn) & 0xFFFFFFFFL, what);
            }
            if (line.len() != null) {
                assertEquals(line.len(), s.length(), what);
            }
        }
    }

    private static void checkMpaFrames(TsharkSummary summary, List<TcpConnection> connections) {
        long mpaConnections = connections.stream()
                .filter(c -> startsWith(c.clientToServer().bytes(), "MPA ID Req Frame")).count();
        assertEquals(2 * mpaConnections, summary.mpaFrames().size(), "a Request and a Reply per MPA connection");
        for (TsharkSummary.MpaFrame mpa : summary.mpaFrames()) {
            TcpConnection c = connections.stream()
                    .filter(x -> x.clientPort() == (mpa.request() ? mpa.srcPort() : mpa.dstPort()))
                    .findFirst().orElseThrow();
            TcpStream s = mpa.request() ? c.clientToServer() : c.serverToClient();
            assertEquals(mpa.frame(), s.frameAt(0), "MPA frame of " + c);
            assertArrayEquals(mpa.bytes(), Arrays.copyOf(s.bytes(), mpa.bytes().length),
                    "stream start of " + c + "\n" + Hex.dump(Arrays.copyOf(s.bytes(), 32)));
            assertEquals(mpa.request() ? "MPA ID Req Frame" : "MPA ID Rep Frame",
                    new String(s.bytes(), 0, 16, StandardCharsets.US_ASCII));
        }
    }

    /** One MPA FPDU found in a stream. */
    private record Fpdu(int opcode, int lastFrame, long crcField, long crc32c) {
    }

    private static void checkFpdus(TsharkSummary summary, List<TcpConnection> connections) {
        List<Fpdu> fpdus = new ArrayList<>();
        for (TcpConnection c : connections) {
            fpdus.addAll(fpdus(c));
        }
        Map<Integer, int[]> byOpcode = new TreeMap<>(); // opcode -> {count, first frame}
        for (Fpdu f : fpdus) {
            int[] v = byOpcode.computeIfAbsent(f.opcode(), k -> new int[] {0, Integer.MAX_VALUE});
            v[0]++;
            v[1] = Math.min(v[1], f.lastFrame());
        }
        List<TsharkSummary.OpcodeCount> actual = byOpcode.entrySet().stream()
                .map(e -> new TsharkSummary.OpcodeCount(e.getKey(), e.getValue()[0], e.getValue()[1])).toList();
        assertEquals(summary.opcodes(), actual);

        int good = 0;
        Map<Long, Integer> values = new TreeMap<>();
        boolean crc = summary.goodCrcs() > 0;
        for (Fpdu f : fpdus) {
            if (crc) {
                assertEquals(f.crc32c(), f.crcField(), "CRC of " + f);
                good++;
            } else {
                values.merge(f.crcField(), 1, Integer::sum);
            }
        }
        assertEquals(summary.goodCrcs(), good);
        assertEquals(summary.crcValues(), values.entrySet().stream()
                .map(e -> new TsharkSummary.CrcValueCount(e.getKey(), e.getValue())).toList());
    }

    /**
     * Walks both directions of an MPA connection (RFC 5044 without markers, which no capture
     * negotiates): the Request/Reply, then FPDUs of ULPDU_Length, ULPDU, pad to 4, CRC.
     */
    private static List<Fpdu> fpdus(TcpConnection c) {
        byte[] req = c.clientToServer().bytes();
        byte[] rep = c.serverToClient().bytes();
        if (!startsWith(req, "MPA ID Req Frame") || !startsWith(rep, "MPA ID Rep Frame") || (rep[16] & 0x20) != 0) {
            return List.of(); // not MPA, or rejected (R=1)
        }
        assertEquals(0, (rep[16] & 0x80), "markers negotiated");
        List<Fpdu> out = new ArrayList<>();
        for (TcpStream s : List.of(c.clientToServer(), c.serverToClient())) {
            ByteBuffer b = ByteBuffer.wrap(s.bytes());
            int pos = 20 + (b.getShort(18) & 0xFFFF);
            while (pos < s.length()) {
                int ulpduLength = b.getShort(pos) & 0xFFFF;
                int padded = (2 + ulpduLength + 3) & ~3;
                assertTrue(pos + padded + 4 <= s.length(), "FPDU at " + pos + " runs past the end of " + s);
                CRC32C crc = new CRC32C();
                crc.update(s.bytes(), pos, padded);
                int rdmapControl = s.bytes()[pos + 3] & 0xFF; // after ULPDU_Length and the DDP control byte
                assertEquals(1, rdmapControl >> 6, "RDMAP version at stream offset " + pos);
                out.add(new Fpdu(rdmapControl & 0x0F, s.frameAt(pos + padded + 3),
                        b.getInt(pos + padded) & 0xFFFFFFFFL, Integer.reverseBytes((int) crc.getValue()) & 0xFFFFFFFFL));
                pos += padded + 4;
            }
        }
        return out;
    }

    private static boolean startsWith(byte[] b, String ascii) {
        return b.length >= 20 && new String(b, 0, ascii.length(), StandardCharsets.US_ASCII).equals(ascii);
    }

    private static long wireOctets(TcpStream s) {
        return s.segments().stream().mapToLong(TcpSegment::wireLength).sum();
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }

    private static long isn(TcpStream s) {
        TcpSegment syn = s.segments().stream().filter(TcpSegment::isSyn).findFirst().orElse(null);
        assertNotNull(syn, "every connection in these captures starts with a handshake");
        return syn.seq();
    }

    private static Set<String> flagNames(TcpSegment s) {
        Set<String> names = new LinkedHashSet<>();
        if (s.isFin()) names.add("FIN");
        if (s.isSyn()) names.add("SYN");
        if (s.isRst()) names.add("RST");
        if (s.isPsh()) names.add("PSH");
        if (s.isAck()) names.add("ACK");
        return names;
    }
}
