package dev.iwarp.testkit;

import dev.iwarp.testkit.TcpStream.Chunk;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static dev.iwarp.testkit.TcpSegment.ACK;
import static dev.iwarp.testkit.TcpSegment.FIN;
import static dev.iwarp.testkit.TcpSegment.PSH;
import static dev.iwarp.testkit.TcpSegment.RST;
import static dev.iwarp.testkit.TcpSegment.SYN;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TcpStreamsTest {

    // --- the real siw captures (facts from the tshark summaries next to them) ---

    @Test
    void rpingCrcIsOneConnectionWithTheMpaHandshakeFirst() throws Exception {
        SharedData.assumeAvailable("the real siw captures");
        List<TcpConnection> connections = TcpStreams.of(SharedData.siwPcap("rping-crc.pcap"));
        assertEquals(1, connections.size());
        TcpConnection c = connections.get(0);
        assertEquals("10.0.2.15", c.clientAddress().getHostAddress());
        assertEquals(48664, c.clientPort());
        assertEquals("10.0.2.15", c.serverAddress().getHostAddress());
        assertEquals(7174, c.serverPort());

        TcpStream up = c.clientToServer();
        TcpStream down = c.serverToClient();
        assertArrayEquals(Hex.parse("4d504120494420526571204672616d6550020004 00010001"), Arrays.copyOf(up.bytes(), 24));
        assertArrayEquals(Hex.parse("4d504120494420526570204672616d6550020004 00010001"), Arrays.copyOf(down.bytes(), 24));
        // The FINs are frame 32 (Seq=517) and frame 33 (Seq=673): 516 and 672 payload octets before them.
        assertEquals(516, up.length());
        assertEquals(672, down.length());
        assertTrue(up.complete() && down.complete());
        assertEquals(18, up.segments().size()); // conversation line: 18 frames A->B, 16 frames B->A
        assertEquals(16, down.segments().size());

        // Frames 4 (Request, Len 24), 8 (Send, Seq 25 Len 40), 10 (Read Response, Seq 65 Len 84).
        assertEquals(List.of(new Chunk(4, 0, 24), new Chunk(8, 24, 40), new Chunk(10, 64, 84)), up.chunks().subList(0, 3));
        // Frames 6 (Reply), 9 (Read Request, Seq 25 Len 52); frame 13 is the Write at Seq 117, Len 84.
        assertEquals(List.of(new Chunk(6, 0, 24), new Chunk(9, 24, 52)), down.chunks().subList(0, 2));
        assertTrue(down.chunks().contains(new Chunk(13, 116, 84)));
        assertEquals(4, up.frameAt(0));
        assertEquals(4, up.frameAt(23));
        assertEquals(8, up.frameAt(24));
        assertEquals(13, down.frameAt(116 + 83));
        assertThrows(IndexOutOfBoundsException.class, () -> up.frameAt(516));
    }

    @Test
    void ibWriteBwHasTwoConnectionsAndFpdusSplitAcrossSegments() throws Exception {
        SharedData.assumeAvailable("the real siw captures");
        List<TcpConnection> connections = TcpStreams.of(SharedData.siwPcap("ib_write_bw.pcap"));
        // In order of first appearance: the rdma_cm/perftest exchange (frame 1), then the data connection (frame 19).
        assertEquals(List.of(34613, 59849), connections.stream().map(TcpConnection::clientPort).toList());
        assertEquals(List.of(18515, 18515), connections.stream().map(TcpConnection::serverPort).toList());
        assertEquals(19, connections.get(1).segments().get(0).frame());

        TcpStream data = connections.get(1).clientToServer();
        // Frame 34: Seq=25 Len=4112, frame 35: the 4 CRC octets of the same FPDU, frame 37: Seq=4141 Len=4112.
        assertEquals(new Chunk(34, 24, 4112), data.chunks().get(1));
        assertEquals(new Chunk(35, 24 + 4112, 4), data.chunks().get(2));
        assertEquals(new Chunk(37, 4140, 4112), data.chunks().get(3));
        int ulpduLength = ByteBuffer.wrap(data.bytes()).getShort(24) & 0xFFFF;
        assertEquals(14 + 4096, ulpduLength); // tagged DDP header + 4096-octet RDMA Write payload
        assertEquals(35, data.frameAt(24 + 2 + ulpduLength)); // its CRC field
        // The server sends only its MPA Reply on the data connection.
        assertEquals(24, connections.get(1).serverToClient().length());
    }

    // --- synthetic segments ---

    private static final InetAddress A = address(10, 0, 0, 1);
    private static final InetAddress B = address(10, 0, 0, 2);

    /** A segment from A:1000 to B:2000 (fromA) or back. */
    private static TcpSegment seg(int frame, boolean fromA, long seq, int flags, String payload) {
        return new TcpSegment(frame, Instant.EPOCH.plusMillis(frame), 54 + payload.length(),
                fromA ? A : B, fromA ? 1000 : 2000, fromA ? B : A, fromA ? 2000 : 1000,
                seq & 0xFFFFFFFFL, 0, flags, payload.getBytes(StandardCharsets.US_ASCII));
    }

    private static String text(TcpStream s) {
        return new String(s.bytes(), StandardCharsets.US_ASCII);
    }

    @Test
    void reassemblesAcrossTheSequenceNumberWrap() {
        long isn = 0xFFFFFFF5L; // data starts at ...F6 and crosses 2^32 in the second segment
        List<TcpConnection> cs = TcpStreams.of(List.of(
                seg(1, true, isn, SYN, ""),
                seg(2, false, 77, SYN | ACK, ""),
                seg(3, true, isn + 1, ACK | PSH, "0123456789"),
                seg(4, true, isn + 11, ACK | PSH, "abcdefghij"),
                seg(5, false, 78, ACK | PSH, "reply"),
                seg(6, true, isn + 21, ACK | PSH, "KLM"),
                seg(7, true, isn + 24, FIN | ACK, "")));
        assertEquals(1, cs.size());
        TcpConnection c = cs.get(0);
        assertEquals(1000, c.clientPort());
        assertEquals("0123456789abcdefghijKLM", text(c.clientToServer()));
        assertEquals("reply", text(c.serverToClient()));
        assertEquals(List.of(new Chunk(3, 0, 10), new Chunk(4, 10, 10), new Chunk(6, 20, 3)), c.clientToServer().chunks());
    }

    @Test
    void takesRetransmittedAndOverlappingBytesOnceFirstCopyWinning() {
        TcpStream s = TcpStreams.of(List.of(
                seg(1, true, 100, SYN, ""),
                seg(2, true, 101, ACK, "0123456789"),
                seg(3, true, 101, ACK, "0123456789"),       // plain retransmission
                seg(4, true, 106, ACK, "XXXXXabcde"),       // overlaps 5 old octets (different!) and adds 5
                seg(5, true, 110, ACK, "Z"),                // keep-alive style: an old octet again
                seg(6, true, 116, ACK, "fgh"))).get(0).clientToServer();
        assertEquals("0123456789abcdefgh", text(s));
        assertEquals(List.of(new Chunk(2, 0, 10), new Chunk(4, 10, 5), new Chunk(6, 15, 3)), s.chunks());
        assertTrue(s.complete());
    }

    @Test
    void holdsOutOfOrderSegmentsUntilTheHoleFills() {
        TcpStream s = TcpStreams.of(List.of(
                seg(1, true, 0, SYN, ""),
                seg(2, true, 11, ACK, "klmno"),
                seg(3, true, 6, ACK, "fghij"),
                seg(4, true, 1, ACK, "abcde"))).get(0).clientToServer();
        assertEquals("abcdefghijklmno", text(s));
        assertEquals(List.of(new Chunk(4, 0, 5), new Chunk(3, 5, 5), new Chunk(2, 10, 5)), s.chunks());
        assertEquals(2, s.frameAt(14));
    }

    @Test
    void stopsAtAHoleThatNeverFills() {
        TcpStream s = TcpStreams.of(List.of(
                seg(1, true, 0, SYN, ""),
                seg(2, true, 1, ACK, "abc"),
                seg(3, true, 10, ACK, "lost before me"))).get(0).clientToServer();
        assertEquals("abc", text(s));
        assertFalse(s.complete());
    }

    @Test
    void ignoresPayloadOnReset() {
        TcpConnection c = TcpStreams.of(List.of(
                seg(1, true, 0, SYN, ""),
                seg(2, false, 50, SYN | ACK, ""),
                seg(3, true, 1, ACK, "GET /"),
                seg(4, false, 51, RST | ACK, "connection refused by policy"))).get(0);
        assertEquals("GET /", text(c.clientToServer()));
        assertEquals(0, c.serverToClient().length());
        assertEquals(2, c.serverToClient().segments().size());
    }

    @Test
    void orientsConnectionsWhoseSynWasNotCaptured() {
        // SYN-ACK seen: its sender is the server, even though the first segment comes from it.
        TcpConnection c = TcpStreams.of(List.of(
                seg(1, false, 500, SYN | ACK, ""),
                seg(2, true, 1, ACK, "hi"))).get(0);
        assertEquals(1000, c.clientPort());
        assertEquals("hi", text(c.clientToServer()));
        // No handshake at all: the first sender is the client and its first sequence number is offset 0.
        TcpConnection d = TcpStreams.of(List.of(
                seg(1, false, 900, ACK, "late"),
                seg(2, true, 300, ACK, ""),
                seg(3, false, 904, ACK, "r"))).get(0);
        assertEquals(2000, d.clientPort());
        assertEquals("later", text(d.clientToServer()));
    }

    @Test
    void listsConnectionsInOrderOfFirstAppearanceAndSplitsPortReuse() {
        List<TcpSegment> segments = new ArrayList<>(List.of(
                seg(1, true, 10, SYN, ""),
                seg(2, true, 10, SYN, ""),           // retransmitted SYN: same connection
                seg(3, false, 80, SYN | ACK, ""),
                seg(4, true, 11, ACK, "one"),
                seg(5, true, 14, FIN | ACK, ""),
                seg(6, true, 5000, SYN, ""),         // same 4-tuple, new ISN: a new connection
                seg(7, false, 9000, SYN | ACK, ""),
                seg(8, true, 5001, ACK, "two")));
        TcpSegment other = new TcpSegment(9, Instant.EPOCH, 60, B, 3000, A, 4000, 1, 0, SYN, new byte[0]);
        segments.add(5, other);                      // a third connection, first seen between the two
        List<TcpConnection> cs = TcpStreams.of(segments);
        assertEquals(3, cs.size());
        assertEquals("one", text(cs.get(0).clientToServer()));
        assertEquals(4, cs.get(0).clientToServer().segments().size()); // both SYNs, data, FIN
        assertEquals(3000, cs.get(1).clientPort());
        assertEquals("two", text(cs.get(2).clientToServer()));
        assertEquals(List.of(new Chunk(8, 0, 3)), cs.get(2).clientToServer().chunks());
    }

    private static InetAddress address(int... octets) {
        byte[] raw = new byte[octets.length];
        for (int i = 0; i < raw.length; i++) {
            raw[i] = (byte) octets[i];
        }
        try {
            return InetAddress.getByAddress(raw);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
