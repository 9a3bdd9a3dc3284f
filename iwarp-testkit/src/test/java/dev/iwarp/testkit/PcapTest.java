package dev.iwarp.testkit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static dev.iwarp.testkit.PcapBuilder.concat;
import static dev.iwarp.testkit.PcapBuilder.ethernet;
import static dev.iwarp.testkit.PcapBuilder.ipv4;
import static dev.iwarp.testkit.PcapBuilder.ipv6WithHopByHop;
import static dev.iwarp.testkit.PcapBuilder.tcp;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PcapTest {

    private static final byte[] MPA_REQUEST = Hex.parse("4d504120494420526571204672616d6550020004 00010001");

    // --- the real siw captures (facts from rping-crc.txt and c-host-to-guest-garbage.txt) ---

    @Test
    void readsRpingCrcFramesAsTsharkNumbersThem() throws Exception {
        SharedData.assumeAvailable("the real siw captures");
        Pcap pcap = Pcap.read(SharedData.siwPcap("rping-crc.pcap"));
        assertEquals(Pcap.LINKTYPE_ETHERNET, pcap.linkType());
        assertEquals(34, pcap.frameCount());
        List<TcpSegment> s = pcap.tcpSegments();
        assertEquals(34, s.size());

        TcpSegment syn = s.get(0); // 1  0.000000  TCP 74 48664 → 7174 [SYN] Seq=0 Len=0
        assertEquals(1, syn.frame());
        assertEquals("10.0.2.15", syn.src().getHostAddress());
        assertEquals("10.0.2.15", syn.dst().getHostAddress());
        assertEquals(48664, syn.srcPort());
        assertEquals(7174, syn.dstPort());
        assertEquals(TcpSegment.SYN, syn.flags());
        assertEquals(74, syn.wireLength());
        assertEquals(0, syn.length());
        assertEquals(Instant.ofEpochSecond(0x6b02d160L, 0x0b6301 * 1000L), syn.timestamp()); // from the record header

        TcpSegment synAck = s.get(1); // 2  TCP 74 7174 → 48664 [SYN, ACK] Seq=0 Ack=1
        assertTrue(synAck.isSyn() && synAck.isAck() && !synAck.isFin());
        assertEquals(7174, synAck.srcPort());
        assertEquals((syn.seq() + 1) & 0xFFFFFFFFL, synAck.ack());

        TcpSegment request = s.get(3); // 4  0.010934  MPA 90 48664 > 7174 MPA Request Frame (Seq=1 Len=24)
        assertEquals(4, request.frame());
        assertEquals(90, request.wireLength());
        assertEquals(Duration.ofNanos(10_934_000), Duration.between(syn.timestamp(), request.timestamp()));
        assertEquals((syn.seq() + 1) & 0xFFFFFFFFL, request.seq());
        assertArrayEquals(MPA_REQUEST, request.payload());

        TcpSegment fin = s.get(31); // 32  TCP 66 48664 → 7174 [FIN, ACK] Seq=517 Ack=673 Len=0
        assertEquals(TcpSegment.FIN | TcpSegment.ACK, fin.flags());
        assertEquals((syn.seq() + 517) & 0xFFFFFFFFL, fin.seq());
        assertEquals((synAck.seq() + 673) & 0xFFFFFFFFL, fin.ack());
    }

    @Test
    void readsTheHostToGuestGarbageCapture() throws Exception {
        SharedData.assumeAvailable("the real siw captures");
        List<TcpSegment> s = Pcap.read(SharedData.siwPcap("c-host-to-guest-garbage.pcap")).tcpSegments();
        assertEquals(6, s.size());
        TcpSegment get = s.get(3); // 4  10.0.2.2 → 10.0.2.15  HTTP 100 GET / HTTP/1.0
        assertEquals("10.0.2.2", get.src().getHostAddress());
        assertEquals(52688, get.srcPort());
        assertEquals(100, get.wireLength());
        assertEquals(46, get.length());
        assertTrue(new String(get.payload(), StandardCharsets.US_ASCII).startsWith("GET / HTTP/1.0\r\n"));
        TcpSegment rst = s.get(5); // 6  7174 → 52688 [RST, ACK]
        assertEquals(TcpSegment.RST | TcpSegment.ACK, rst.flags());
        assertEquals(7174, rst.srcPort());
    }

    // --- synthetic files: every link type, byte order and timestamp resolution ---

    static Stream<Arguments> linkTypes() {
        UnaryOperator<byte[]> eth = ip -> ethernet(0x0800, ip);
        UnaryOperator<byte[]> vlan = ip -> ethernet(0x8100, concat(new byte[] {0, 5, 0x08, 0x00}, ip));
        UnaryOperator<byte[]> sll = ip -> PcapBuilder.sll(0x0800, ip);
        UnaryOperator<byte[]> sll2 = ip -> PcapBuilder.sll2(0x0800, ip);
        UnaryOperator<byte[]> raw = ip -> ip;
        return Stream.of(
                Arguments.of("ethernet", Pcap.LINKTYPE_ETHERNET, eth),
                Arguments.of("ethernet+802.1Q", Pcap.LINKTYPE_ETHERNET, vlan),
                Arguments.of("linux-sll", Pcap.LINKTYPE_LINUX_SLL, sll),
                Arguments.of("linux-sll2", Pcap.LINKTYPE_LINUX_SLL2, sll2),
                Arguments.of("null", Pcap.LINKTYPE_NULL, (UnaryOperator<byte[]>) PcapBuilder::nullHeader),
                Arguments.of("raw", Pcap.LINKTYPE_RAW, raw),
                Arguments.of("ipv4", Pcap.LINKTYPE_IPV4, raw));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("linkTypes")
    void readsEveryLinkTypeInBothByteOrdersAndResolutions(String name, int linkType, UnaryOperator<byte[]> link) {
        byte[] payload = "hello".getBytes(StandardCharsets.US_ASCII);
        byte[] ip = ipv4("192.0.2.1", "198.51.100.7", tcp(40000, 7174, 0xFFFFFFF0L, 7, TcpSegment.PSH | TcpSegment.ACK, payload));
        Instant t = Instant.parse("2024-05-01T12:00:00.123456789Z");
        for (ByteOrder order : List.of(ByteOrder.BIG_ENDIAN, ByteOrder.LITTLE_ENDIAN)) {
            for (boolean nanos : List.of(false, true)) {
                byte[] file = new PcapBuilder(linkType, order, nanos)
                        .frame(t, link.apply(ipv4("192.0.2.1", "192.0.2.2", 17, new byte[8]))) // UDP: skipped, counted
                        .frame(t, link.apply(ip))
                        .build();
                String what = name + " " + order + (nanos ? " ns" : " µs");
                Pcap pcap = Pcap.parse(file);
                assertEquals(linkType, pcap.linkType(), what);
                assertEquals(2, pcap.frameCount(), what);
                assertEquals(1, pcap.tcpSegments().size(), what);
                TcpSegment s = pcap.tcpSegments().get(0);
                assertEquals(2, s.frame(), what);
                assertEquals("192.0.2.1", s.src().getHostAddress(), what);
                assertEquals("198.51.100.7", s.dst().getHostAddress(), what);
                assertEquals(40000, s.srcPort(), what);
                assertEquals(7174, s.dstPort(), what);
                assertEquals(0xFFFFFFF0L, s.seq(), what);
                assertEquals(7, s.ack(), what);
                assertTrue(s.isPsh() && s.isAck() && !s.isSyn(), what);
                assertArrayEquals(payload, s.payload(), what);
                assertEquals(nanos ? t : t.minusNanos(789), s.timestamp(), what);
            }
        }
    }

    @Test
    void readsIpv6WithExtensionHeaders() {
        byte[] tcp = tcp(5000, 18515, 1, 0, TcpSegment.SYN, new byte[0]);
        byte[] file = new PcapBuilder(Pcap.LINKTYPE_ETHERNET, ByteOrder.LITTLE_ENDIAN, false)
                .frame(Instant.EPOCH, ethernet(0x86DD, ipv6WithHopByHop("2001:db8::1", "2001:db8::2", tcp)))
                .build();
        TcpSegment s = Pcap.parse(file).tcpSegments().get(0);
        assertEquals("2001:db8:0:0:0:0:0:1", s.src().getHostAddress());
        assertEquals(18515, s.dstPort());
        assertTrue(s.isSyn());
    }

    @Test
    void ignoresEthernetPaddingAndCountsNonIpFrames() {
        byte[] ip = ipv4("10.0.2.2", "10.0.2.15", tcp(1, 2, 100, 0, TcpSegment.ACK, new byte[] {42}));
        byte[] padded = concat(ethernet(0x0800, ip), new byte[60 - 14 - ip.length]); // to the 60-octet minimum
        byte[] arp = ethernet(0x0806, new byte[28]);
        Pcap pcap = Pcap.parse(new PcapBuilder(Pcap.LINKTYPE_ETHERNET, ByteOrder.BIG_ENDIAN, false)
                .frame(Instant.EPOCH, arp).frame(Instant.EPOCH, padded).build());
        assertEquals(2, pcap.frameCount());
        TcpSegment s = pcap.tcpSegments().get(0);
        assertEquals(2, s.frame());
        assertEquals(60, s.wireLength());
        assertArrayEquals(new byte[] {42}, s.payload());
    }

    @Test
    void rejectsFramesCutBySnapLength() {
        byte[] frame = ethernet(0x0800, ipv4("10.0.2.2", "10.0.2.15", tcp(1, 2, 100, 0, TcpSegment.ACK, new byte[100])));
        byte[] file = new PcapBuilder(Pcap.LINKTYPE_ETHERNET, ByteOrder.BIG_ENDIAN, false)
                .frame(Instant.EPOCH, Arrays.copyOf(frame, 96), frame.length).build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Pcap.parse(file));
        assertTrue(e.getMessage().contains("frame 1") && e.getMessage().contains("snap length"), e.getMessage());
    }

    @Test
    void rejectsPcapngAndOtherFiles() {
        byte[] pcapng = Hex.parse("0a0d0d0a 1c000000 4d3c2b1a 01000000 ffffffffffffffff 1c000000");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Pcap.parse(pcapng)).getMessage().contains("editcap"));
        assertThrows(IllegalArgumentException.class, () -> Pcap.parse(new byte[24]));
        assertThrows(IllegalArgumentException.class, () -> Pcap.parse(new byte[3]));
        byte[] wifi = new PcapBuilder(105, ByteOrder.BIG_ENDIAN, false).build();
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Pcap.parse(wifi)).getMessage().contains("105"));
        byte[] cut = new PcapBuilder(Pcap.LINKTYPE_RAW, ByteOrder.BIG_ENDIAN, false).frame(Instant.EPOCH, new byte[40]).build();
        assertThrows(IllegalArgumentException.class, () -> Pcap.parse(Arrays.copyOf(cut, cut.length - 1)));
        assertFalse(Pcap.parse(new PcapBuilder(1, ByteOrder.BIG_ENDIAN, true).build()).tcpSegments().iterator().hasNext());
    }
}
