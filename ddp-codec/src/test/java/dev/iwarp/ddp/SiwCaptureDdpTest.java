package dev.iwarp.ddp;

import dev.iwarp.mpa.MpaFramer;
import dev.iwarp.mpa.MpaStartupFrame;
import dev.iwarp.testkit.SharedData;
import dev.iwarp.testkit.TcpConnection;
import dev.iwarp.testkit.TcpStream;
import dev.iwarp.testkit.TcpStreams;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every DDP segment of every siw capture ({@code ../shared/testdata/siw-pcap/}), cut out of the TCP
 * streams by {@link MpaFramer} and decoded by {@link DdpCodec}, checked against what tshark printed in
 * the {@code .txt} summaries (FPDUs per RDMAP opcode; every DDP field of the first FPDU of each opcode)
 * and against the Data Source rules of RFC 5041 §5.2/§5.3 on all segments.
 */
class SiwCaptureDdpTest {

    @BeforeAll
    static void needsSharedData() {
        SharedData.assumeAvailable("the real siw captures");
    }

    /**
     * One decoded FPDU: the frame that completed it (where tshark, reassembling, shows it), ULPDU length
     * and header fields.
     */
    record Fpdu(int frame, int ulpduLength, boolean tagged, boolean last, int dv, int rsvdUlp, int rsvdUlp2,
                int stag, long to, int qn, int msn, int mo, int payloadLength) {
        int opcode() {
            return rsvdUlp & 0x0F;
        }
    }

    /** What tshark printed for the first FPDU of one opcode. */
    static final class TsharkFirst {
        int frame;
        Integer ulpduLength;
        Boolean tagged;
        Boolean last;
        Integer dv;
        String rsvdUlp; // 5 octets, hex
        Long stag;
        Long to;
        Long qn;
        Long msn;
        Long mo;
    }

    record TsharkSummary(Map<Integer, int[]> countAndFrame, Map<Integer, TsharkFirst> first) {
    }

    private static final Pattern COUNT = Pattern.compile("^\\s*opcode 0x([0-9a-f]{2}): (\\d+) FPDUs, first in frame (\\d+)");
    private static final Pattern FIRST = Pattern.compile("^## First FPDU with RDMAP opcode 0x([0-9a-f]{2}) \\(frame (\\d+)\\)");

    static TsharkSummary readSummary(String txt) throws IOException {
        List<String> lines = Files.readAllLines(SharedData.siwPcap(txt), StandardCharsets.UTF_8);
        Map<Integer, int[]> counts = new TreeMap<>();
        Map<Integer, TsharkFirst> first = new TreeMap<>();
        TsharkFirst current = null;
        for (String line : lines) {
            Matcher m = COUNT.matcher(line);
            if (m.find()) {
                counts.put(Integer.parseInt(m.group(1), 16),
                        new int[] {Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))});
                continue;
            }
            m = FIRST.matcher(line);
            if (m.find()) {
                current = first.computeIfAbsent(Integer.parseInt(m.group(1), 16), k -> new TsharkFirst());
                current.frame = Integer.parseInt(m.group(2));
                continue;
            }
            if (line.startsWith("## ")) {
                current = null;
            }
            if (current == null) {
                continue;
            }
            String t = line.trim();
            String v = t.substring(t.indexOf(':') + 1).trim();
            if (t.startsWith("ULPDU length:")) {
                current.ulpduLength = Integer.parseInt(v.replace(" bytes", ""));
            } else if (t.endsWith("= Tagged flag: True") || t.endsWith("= Tagged flag: False")) {
                current.tagged = t.endsWith("True");
            } else if (t.endsWith("= Last flag: True") || t.endsWith("= Last flag: False")) {
                current.last = t.endsWith("True");
            } else if (t.contains("= DDP protocol version:")) {
                current.dv = Integer.parseInt(t.substring(t.lastIndexOf(':') + 1).trim());
            } else if (t.startsWith("Reserved for use by the ULP:")) {
                current.rsvdUlp = v;
            } else if (t.startsWith("(Data Sink) Steering Tag:")) {
                current.stag = Long.parseLong(v.substring(2), 16);
            } else if (t.startsWith("(Data Sink) Tagged offset:")) {
                current.to = Long.parseUnsignedLong(v.substring(2), 16);
            } else if (t.startsWith("Queue number:")) {
                current.qn = Long.parseLong(v);
            } else if (t.startsWith("Message sequence number:")) {
                current.msn = Long.parseLong(v);
            } else if (t.startsWith("Message offset:")) {
                current.mo = Long.parseLong(v);
            }
        }
        return new TsharkSummary(counts, first);
    }

    /** The FPDUs of one direction, after the MPA startup frame of {@code startupLength} octets. */
    static List<Fpdu> fpdus(TcpStream stream, int startupLength, boolean crc) {
        byte[] bytes = stream.bytes();
        EmbeddedChannel ch = new EmbeddedChannel(new MpaFramer(crc, false, false, 0xFFFF, 0xFFFF, false));
        ch.writeInbound(Unpooled.wrappedBuffer(bytes, startupLength, bytes.length - startupLength));
        List<Fpdu> out = new ArrayList<>();
        long offset = startupLength;
        ByteBuf ulpdu;
        while ((ulpdu = ch.readInbound()) != null) {
            int length = ulpdu.readableBytes();
            int pad = (4 - (2 + length) % 4) % 4;
            long end = offset + MpaFramer.LENGTH_FIELD + length + pad + MpaFramer.CRC_LENGTH; // RFC 5044 §4.1, no markers
            int frame = stream.frameAt(end - 1);
            DdpSegment s = DdpCodec.decode(ulpdu);
            try {
                out.add(s instanceof DdpTaggedSegment t
                        ? new Fpdu(frame, length, true, t.isLast(), t.ddpVersion(), t.rsvdUlp(), 0,
                                t.stag(), t.to(), 0, 0, 0, t.payloadLength())
                        : toFpdu(frame, length, (DdpUntaggedSegment) s));
            } finally {
                s.release();
                ulpdu.release();
            }
            offset = end;
        }
        assertEquals(bytes.length, offset, "the FPDUs cover the stream exactly");
        assertFalse(ch.finish());
        return out;
    }

    private static Fpdu toFpdu(int frame, int length, DdpUntaggedSegment u) {
        return new Fpdu(frame, length, false, u.isLast(), u.ddpVersion(), u.rsvdUlp(), u.rsvdUlp2(), 0, 0, u.qn(),
                u.msn(), u.mo(), u.payloadLength());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            // capture,                 MPA connections, FPDUs (tshark)
            "rping,                    1, 21",
            "rping-crc,                1, 21",
            "rping-p2p,                1, 22",
            "rping-mpa-rev1,           1,  1",
            "probe-crc-host-initiator, 1,  2",
            "ib_write_bw,              2, 52",
            "ib_read_bw,               2, 72",
            "ib_send_bw,               2, 46",
    })
    void everySegmentMatchesTsharkAndTheDataSourceRules(String name, int connections, int total) throws Exception {
        TsharkSummary tshark = readSummary(name + ".txt");
        assertFalse(tshark.countAndFrame().isEmpty(), "summary lists opcodes");
        assertEquals(tshark.countAndFrame().keySet(), tshark.first().keySet(), "a detail section per opcode");
        assertEquals(total, tshark.countAndFrame().values().stream().mapToInt(c -> c[0]).sum());

        Map<Integer, Integer> counts = new TreeMap<>();
        Map<Integer, Fpdu> first = new HashMap<>();
        int mpaConnections = 0;
        for (TcpConnection c : TcpStreams.of(SharedData.siwPcap(name + ".pcap"))) {
            byte[] c2s = c.clientToServer().bytes();
            if (c2s.length < 16 || !Arrays.equals(Arrays.copyOf(c2s, 16), MpaStartupFrame.Type.REQUEST.key())) {
                continue;
            }
            mpaConnections++;
            MpaStartupFrame request = MpaStartupFrame.decode(Unpooled.wrappedBuffer(c2s), 512);
            MpaStartupFrame reply = MpaStartupFrame.decode(Unpooled.wrappedBuffer(c.serverToClient().bytes()), 512);
            assertFalse(request.markers() || reply.markers(), "siw never uses markers");
            boolean crc = request.crc() || reply.crc();
            for (List<Fpdu> direction : List.of(fpdus(c.clientToServer(), request.encodedLength(), crc),
                    fpdus(c.serverToClient(), reply.encodedLength(), crc))) {
                checkDataSourceRules(direction);
                for (Fpdu f : direction) {
                    counts.merge(f.opcode(), 1, Integer::sum);
                    first.merge(f.opcode(), f, (a, b) -> b.frame() < a.frame() ? b : a);
                }
            }
        }
        assertEquals(connections, mpaConnections);

        Map<Integer, Integer> expectedCounts = new TreeMap<>();
        tshark.countAndFrame().forEach((op, c) -> expectedCounts.put(op, c[0]));
        assertEquals(expectedCounts, counts, "FPDUs per RDMAP opcode, as tshark counted");

        for (Map.Entry<Integer, TsharkFirst> e : tshark.first().entrySet()) {
            int opcode = e.getKey();
            TsharkFirst t = e.getValue();
            Fpdu f = first.get(opcode);
            String what = name + " opcode " + opcode + " frame " + t.frame;
            assertEquals(tshark.countAndFrame().get(opcode)[1], t.frame, what);
            assertEquals(t.frame, f.frame(), what + ": first FPDU's frame");
            assertEquals(t.ulpduLength, f.ulpduLength(), what + ": ULPDU length");
            assertEquals(t.tagged, f.tagged(), what + ": T");
            assertEquals(t.last, f.last(), what + ": L");
            assertEquals(t.dv, f.dv(), what + ": DV");
            if (f.tagged()) {
                assertNotNull(t.stag, what);
                assertNotNull(t.to, what);
                assertEquals(t.stag.longValue(), Integer.toUnsignedLong(f.stag()), what + ": STag");
                assertEquals(t.to.longValue(), f.to(), what + ": TO");
            } else {
                assertNotNull(t.rsvdUlp, what);
                assertNotNull(t.qn, what);
                assertNotNull(t.msn, what);
                assertNotNull(t.mo, what);
                assertEquals(t.rsvdUlp, String.format("%02x%08x", f.rsvdUlp(), f.rsvdUlp2()), what + ": RsvdULP");
                assertEquals(t.qn.longValue(), Integer.toUnsignedLong(f.qn()), what + ": QN");
                assertEquals(t.msn.longValue(), Integer.toUnsignedLong(f.msn()), what + ": MSN");
                assertEquals(t.mo.longValue(), Integer.toUnsignedLong(f.mo()), what + ": MO");
            }
        }
    }

    /**
     * RFC 5041 §5.2/§5.3 on one direction: DV 1; per QN the MSNs run 1, 2, 3, ... one per
     * message; MO (untagged) and TO (tagged) advance by the octets of the message so far; L=1 ends each
     * message and no message is left open; RDMAP opcodes use their model and QN (RFC 5040 §4.2), and
     * a Read Request is one 46-octet ULPDU.
     */
    static void checkDataSourceRules(List<Fpdu> direction) {
        Map<Integer, Integer> expectedMsn = new HashMap<>();
        Fpdu untaggedStart = null;
        long untaggedSoFar = 0;
        Fpdu taggedStart = null;
        long taggedSoFar = 0;
        for (Fpdu f : direction) {
            assertEquals(1, f.dv(), "DV 1 in " + f);
            int op = f.opcode();
            if (f.tagged()) {
                assertTrue(op == 0 || op == 2, "tagged opcodes are Write and Read Response: " + f);
                if (taggedStart == null) {
                    taggedStart = f;
                    taggedSoFar = 0;
                }
                assertEquals(taggedStart.stag(), f.stag(), "STag constant in a message: " + f);
                assertEquals(taggedStart.rsvdUlp(), f.rsvdUlp(), "RsvdULP constant in a message: " + f);
                assertEquals(taggedStart.to() + taggedSoFar, f.to(), "TO advances by the payload so far: " + f);
                taggedSoFar += f.payloadLength();
                if (f.last()) {
                    taggedStart = null;
                }
            } else {
                int qn = switch (op) {
                    case 1 -> 1;
                    case 3, 4, 5, 6 -> 0;
                    case 7 -> 2;
                    default -> -1;
                };
                assertEquals(qn, f.qn(), "QN of opcode " + op + ": " + f);
                if (op == 1) {
                    assertEquals(46, f.ulpduLength(), "Read Request ULPDU: 18 + 28 octets");
                    assertTrue(f.last(), "Read Request is one segment");
                }
                if (untaggedStart == null) {
                    untaggedStart = f;
                    untaggedSoFar = 0;
                    int msn = expectedMsn.getOrDefault(f.qn(), 1);
                    assertEquals(msn, f.msn(), "MSN per QN from 1, +1 per message: " + f);
                }
                assertEquals(untaggedStart.msn(), f.msn(), "MSN constant in a message: " + f);
                assertEquals(untaggedStart.qn(), f.qn(), "QN constant in a message: " + f);
                assertEquals(untaggedStart.rsvdUlp(), f.rsvdUlp(), "RsvdULP constant in a message: " + f);
                assertEquals(untaggedSoFar, Integer.toUnsignedLong(f.mo()), "MO = octets of the message so far: " + f);
                untaggedSoFar += f.payloadLength();
                if (f.last()) {
                    expectedMsn.put(f.qn(), f.msn() + 1);
                    untaggedStart = null;
                }
            }
        }
        if (untaggedStart != null || taggedStart != null) {
            fail("a message without its L=1 segment: " + (untaggedStart != null ? untaggedStart : taggedStart));
        }
    }
}
