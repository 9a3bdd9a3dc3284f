package dev.iwarp.server.perftest;

import dev.iwarp.testkit.Hex;
import dev.iwarp.testkit.SharedData;
import dev.iwarp.testkit.TcpConnection;
import dev.iwarp.testkit.TcpStreams;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * perftest's control flow in the real siw captures ({@code ../shared/testdata/siw-pcap/ib_*_bw.pcap}, perftest
 * "6.06" on both ends): every control Send decodes with our decoders to what the run did, our encoders produce the
 * same octets for the same values, and the data connection uses exactly the STag/TO the dests carried.
 */
class SiwPerftestCaptureTest {

    @BeforeAll
    static void needsSharedData() {
        SharedData.assumeAvailable("the real perftest captures");
    }

    /** One ULPDU of an MPA stream without markers or CRC checking: the DDP/RDMAP header and the payload. */
    record Ulpdu(byte[] octets) {
        boolean tagged() {
            return (octets[0] & 0x80) != 0;
        }

        int opcode() {
            return octets[1] & 0x0f;
        }

        /** Untagged: QN, MSN; payload after the 18-octet header (tagged: after 14). */
        int qn() {
            return ByteBuffer.wrap(octets).getInt(6);
        }

        int msn() {
            return ByteBuffer.wrap(octets).getInt(10);
        }

        int stag() {
            return ByteBuffer.wrap(octets).getInt(2);
        }

        long to() {
            return ByteBuffer.wrap(octets).getLong(6);
        }

        byte[] payload() {
            return Arrays.copyOfRange(octets, tagged() ? 14 : 18, octets.length);
        }
    }

    /** The ULPDUs after the MPA Request/Reply of one direction (FPDU: length, ULPDU, pad to 4, CRC). */
    static List<Ulpdu> ulpdus(byte[] stream) {
        int at = 20 + (((stream[18] & 0xff) << 8) | (stream[19] & 0xff));
        List<Ulpdu> list = new ArrayList<>();
        while (at + 2 <= stream.length) {
            int len = ((stream[at] & 0xff) << 8) | (stream[at + 1] & 0xff);
            list.add(new Ulpdu(Arrays.copyOfRange(stream, at + 2, at + 2 + len)));
            at += 2 + len;
            at += (4 - at % 4) % 4; // pad: FPDUs are 4-aligned from the first one (MPA frame length is 4-aligned)
            at += 4;                // CRC field
        }
        return list;
    }

    /** Control Sends (QN 0) of one direction of connection A. */
    static List<byte[]> sends(List<Ulpdu> u) {
        List<byte[]> s = new ArrayList<>();
        for (Ulpdu x : u) {
            if (!x.tagged() && x.opcode() == 3) {
                assertEquals(0, x.qn());
                assertEquals(s.size() + 1, x.msn(), "MSN runs 1..n");
                s.add(x.payload());
            }
        }
        return s;
    }

    record Run(List<byte[]> fromClient, List<byte[]> fromServer, List<Ulpdu> dataFromClient, List<Ulpdu> dataFromServer) {
    }

    static Run run(String pcap) throws Exception {
        List<TcpConnection> conns = TcpStreams.of(SharedData.siwPcap(pcap));
        assertEquals(2, conns.size(), "perftest -R opens two connections");
        // A starts first; B carries the data
        TcpConnection a = conns.get(0).segments().get(0).frame() < conns.get(1).segments().get(0).frame()
                ? conns.get(0) : conns.get(1);
        TcpConnection b = a == conns.get(0) ? conns.get(1) : conns.get(0);
        return new Run(sends(ulpdus(a.clientToServer().bytes())), sends(ulpdus(a.serverToClient().bytes())),
                ulpdus(b.clientToServer().bytes()), ulpdus(b.serverToClient().bytes()));
    }

    /** X1..X6 of both sides: version 6.06, page 4096, cache line 64, MTU 1024, two barriers. */
    static void checkPreamble(Run r) throws Exception {
        for (List<byte[]> side : List.of(r.fromClient(), r.fromServer())) {
            assertArrayEquals(PerftestVersion.OURS.encode(), side.get(0));
            assertEquals("6.06", PerftestVersion.decode(side.get(0), side.get(0).length).toString());
            assertArrayEquals(ControlMessages.int32(4096), side.get(1));
            assertEquals(4096, ControlMessages.int32(side.get(1), "page size"));
            assertArrayEquals(ControlMessages.int32(64), side.get(2));
            assertArrayEquals(ControlMessages.mtu(3), side.get(3));
            assertEquals(1024, ControlMessages.mtuOctets(side.get(3)));
            assertArrayEquals(ControlMessages.barrier(), side.get(4));
            assertArrayEquals(ControlMessages.barrier(), side.get(5));
        }
    }

    static PingpongDest dest(byte[] m) {
        assertEquals(PingpongDest.LENGTH, m.length);
        return PingpongDest.decode(m, m.length);
    }

    @Test
    void writeBw() throws Exception {
        Run r = run("ib_write_bw.pcap");
        assertEquals(PerftestTest.WRITE_BW.controlSends(), r.fromClient().size());
        assertEquals(PerftestTest.WRITE_BW.controlSends(), r.fromServer().size());
        checkPreamble(r);
        PingpongDest server = dest(r.fromServer().get(6));
        assertEquals(0x8a00fd00, server.rkey());
        assertEquals(0x000055fab58c1000L, server.vaddr());
        for (int k = 6; k <= 9; k++) {
            assertEquals(server.rkey(), dest(r.fromServer().get(k)).rkey());
            dest(r.fromClient().get(k));
        }
        dest(r.fromClient().get(15));
        dest(r.fromServer().get(15));
        // the 20 Writes go to the server's STag/TO (s = 4096 > cycle/2: no walk)
        List<Ulpdu> writes = r.dataFromClient().stream().filter(u -> u.tagged() && u.opcode() == 0).toList();
        assertEquals(20, writes.size());
        for (Ulpdu w : writes) {
            assertEquals(server.rkey(), w.stag());
            assertEquals(server.vaddr(), w.to());
            assertEquals(4096, w.payload().length);
        }
        // the report: client's X11..X15
        assertEquals(4096, ControlMessages.u64(r.fromClient().get(10)));
        assertEquals(20, ControlMessages.u64(r.fromClient().get(11)));
        assertEquals(8.208, ControlMessages.float64(r.fromClient().get(12)), 0.0005);
        assertEquals(6.188, ControlMessages.float64(r.fromClient().get(13)), 0.0005);
        assertEquals(0.001584, ControlMessages.float64(r.fromClient().get(14)), 0.0000005);
        assertEquals(" 4096       20               8.21               6.19   \t\t   0.001584",
                Results.bandwidthLine(new Results.Bandwidth(4096, 20, ControlMessages.float64(r.fromClient().get(12)),
                        ControlMessages.float64(r.fromClient().get(13)), ControlMessages.float64(r.fromClient().get(14)))),
                "the server prints the client's report in perftest's columns");
        for (int k = 10; k <= 14; k++) {
            assertEquals(8, r.fromServer().get(k).length);
        }
    }

    @Test
    void readBw() throws Exception {
        Run r = run("ib_read_bw.pcap");
        assertEquals(16, r.fromClient().size());
        assertEquals(16, r.fromServer().size());
        checkPreamble(r);
        PingpongDest server = dest(r.fromServer().get(6));
        assertEquals(128, server.outReads());
        assertEquals(128, dest(r.fromClient().get(6)).outReads());
        List<Ulpdu> requests = r.dataFromClient().stream().filter(u -> !u.tagged() && u.opcode() == 1).toList();
        assertEquals(20, requests.size());
        for (Ulpdu q : requests) {
            assertEquals(1, q.qn(), "Read Requests on QN 1");
            ByteBuffer p = ByteBuffer.wrap(q.payload());
            assertEquals(4096, p.getInt(12));
            assertEquals(server.rkey(), p.getInt(16), "source STag = the server's dest");
            assertEquals(server.vaddr(), p.getLong(20), "source TO = the server's dest");
        }
        assertEquals(20, r.dataFromServer().stream().filter(u -> u.tagged() && u.opcode() == 2).count());
    }

    @Test
    void sendBwCreditWrites() throws Exception {
        Run r = run("ib_send_bw.pcap");
        assertEquals(PerftestTest.SEND_BW.controlSends(), r.fromClient().size());
        assertEquals(PerftestTest.SEND_BW.controlSends(), r.fromServer().size());
        checkPreamble(r);
        PingpongDest client = dest(r.fromClient().get(6));
        for (int k = 6; k <= 10; k++) {
            PingpongDest d = dest(r.fromClient().get(k));
            assertEquals(client.rkey(), d.rkey(), "every dest of send_bw names the credit word");
            assertEquals(client.vaddr(), d.vaddr());
        }
        assertEquals(0x0000562888b5de44L, client.vaddr());
        List<Ulpdu> sends = r.dataFromClient().stream().filter(u -> !u.tagged() && u.opcode() == 3).toList();
        assertEquals(20, sends.size());
        List<Ulpdu> credits = r.dataFromServer().stream().filter(u -> u.tagged() && u.opcode() == 0).toList();
        int rxDepth = PerftestTest.defaultRxDepth(20);
        int every = rxDepth / 3;
        List<Integer> expected = new ArrayList<>();
        for (int count = 1; count <= 20; count++) {
            if ((count % rxDepth) % every == 0) {
                expected.add(count);
            }
        }
        assertEquals(List.of(6, 12, 18, 20), expected, "our rule for when to write a credit");
        assertEquals(expected.size(), credits.size());
        for (int i = 0; i < credits.size(); i++) {
            Ulpdu c = credits.get(i);
            assertEquals(client.rkey(), c.stag());
            assertEquals(client.vaddr(), c.to());
            assertEquals(4, c.payload().length);
            assertEquals(expected.get(i), ByteBuffer.wrap(c.payload()).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(),
                    "little-endian receive count");
        }
        assertTrue(Arrays.equals(Hex.parse("06000000"), credits.get(0).payload()));
    }
}
