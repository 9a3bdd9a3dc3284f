package dev.iwarp.server.perftest;

import dev.iwarp.testkit.Hex;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Known answers of every control message layout, from perftest's source and the siw captures' bytes. */
class PerftestMessagesTest {

    @Test
    void versionMessageIsAsciiPaddedWithNuls() {
        byte[] captured = Hex.parse("362e3036000000000000000000000000");
        assertArrayEquals(captured, PerftestVersion.OURS.encode());
        PerftestVersion v = PerftestVersion.decode(captured, captured.length);
        assertEquals(6, v.major());
        assertEquals(6, v.minor());
        assertEquals("6.06", v.toString());
    }

    @Test
    void versionsCompareAsNumbers() {
        assertTrue(PerftestVersion.parse("5.60").isBefore(PerftestVersion.FLOOR));
        assertTrue(PerftestVersion.parse("5.69").isBefore(PerftestVersion.FLOOR));
        assertEquals(0, PerftestVersion.parse("5.70").compareTo(PerftestVersion.FLOOR));
        assertTrue(PerftestVersion.FLOOR.isBefore(PerftestVersion.OURS));
        assertTrue(PerftestVersion.OURS.isBefore(PerftestVersion.NEGOTIATES_ALWAYS));
        assertTrue(PerftestVersion.parse("6.27").isBefore(PerftestVersion.NEGOTIATES_ALWAYS));
        assertTrue(PerftestVersion.NEGOTIATES_ALWAYS.isBefore(PerftestVersion.WIDE_DEST));
        assertTrue(PerftestVersion.parse("6.9").isBefore(PerftestVersion.parse("6.10")));
    }

    @Test
    void versionDecodingStopsAtTheFirstNulOrSixteenOctets() {
        byte[] full = "6.29............".getBytes();
        assertThrows(IllegalArgumentException.class, () -> PerftestVersion.decode(full, 16));
        byte[] noNul = "12.345678901234X".getBytes();
        assertThrows(IllegalArgumentException.class, () -> PerftestVersion.decode(noNul, 16));
        assertEquals("6.29", PerftestVersion.decode(Hex.parse("362e323900ff"), 6).toString());
        for (String bad : new String[] {"", "6", "6.", ".06", "a.b", "6.06x", "ethernet"}) {
            assertThrows(IllegalArgumentException.class, () -> PerftestVersion.parse(bad), bad);
        }
    }

    @Test
    void pageSizeCacheLineAndMtu() throws Exception {
        assertArrayEquals(Hex.parse("00001000"), ControlMessages.int32(ControlMessages.PAGE_SIZE));
        assertArrayEquals(Hex.parse("00000040"), ControlMessages.int32(ControlMessages.CACHE_LINE));
        assertEquals(4096, ControlMessages.int32(Hex.parse("00001000"), "page size"));
        assertThrows(PerftestException.class, () -> ControlMessages.int32(Hex.parse("0010"), "page size"));
        assertArrayEquals(Hex.parse("3300"), ControlMessages.mtu(ControlMessages.MTU_ENUM));
        assertEquals(1024, ControlMessages.mtuOctets(Hex.parse("3300")));
        assertEquals(256, ControlMessages.mtuOctets(Hex.parse("3100")));
        assertEquals(4096, ControlMessages.mtuOctets(Hex.parse("3500")));
        assertEquals(-1, ControlMessages.mtuOctets(Hex.parse("3600")));
        assertEquals(-1, ControlMessages.mtuOctets(new byte[0]));
        assertArrayEquals(new byte[56], ControlMessages.barrier());
    }

    @Test
    void reportMessagesAreBigEndian() {
        assertArrayEquals(Hex.parse("0000000000001000"), ControlMessages.u64(4096));
        assertArrayEquals(Hex.parse("0000000000000014"), ControlMessages.u64(20));
        assertEquals(20, ControlMessages.u64(Hex.parse("0000000000000014")));
        assertEquals(8.208, ControlMessages.float64(Hex.parse("40206aa1225f2405")), 0.0005);
        assertEquals(6.188, ControlMessages.float64(Hex.parse("4018c0d49d680387")), 0.0005);
        assertEquals(0.001584, ControlMessages.float64(Hex.parse("3f59f4a5fdf7ebb6")), 0.0000005);
        double d = ControlMessages.float64(Hex.parse("40206aa1225f2405"));
        assertArrayEquals(Hex.parse("40206aa1225f2405"), ControlMessages.float64(d));
    }

    /** The client's X7 of the ib_write_bw capture. */
    private static final String CLIENT_X7 = "00000000 00000001 00000003 007e7ea6 afcb7f00 227f0000 0000564070a64000"
            + " 52540012345600000000000000000000 00000000 00000000";

    @Test
    void destOf56OctetsDecodes() {
        byte[] m = Hex.parse(CLIENT_X7);
        assertEquals(56, m.length);
        PingpongDest d = PingpongDest.decode(m, m.length);
        assertEquals(0, d.lid());
        assertEquals(1, d.outReads());
        assertEquals(3, d.qpn());
        assertEquals(0x7e7ea6, d.psn());
        assertEquals(0xafcb7f00, d.rkey());
        assertEquals(0x0000564070a64000L, d.vaddr());
        assertArrayEquals(Hex.parse("52540012345600000000000000000000"), d.gid());
        assertEquals(0, d.srqn());
        assertEquals(0, d.gidIndex());
        // ours sends the struct padding (octets 20..23) as zeros; everything else as received
        byte[] again = d.encode(false);
        byte[] expected = m.clone();
        expected[20] = expected[21] = expected[22] = expected[23] = 0;
        assertArrayEquals(expected, again);
    }

    @Test
    void destOf64OctetsHasTailMarkersAtOffset32() {
        // perftest 6.29 (the digest's capture of 6.29 against itself), completed with srqn 7, gid_index 1
        byte[] m = Hex.parse("00000000 00000001 00000003 004a983e b6963e00 c2550000 000055c23fc1d000 0000000000000000"
                + " 52540012345600000000000000000000 00000007 00000001");
        assertEquals(64, m.length);
        PingpongDest d = PingpongDest.decode(m, m.length);
        assertEquals(0xb6963e00, d.rkey());
        assertEquals(0x000055c23fc1d000L, d.vaddr());
        assertEquals(0, d.tailMarkersVaddr());
        assertArrayEquals(Hex.parse("52540012345600000000000000000000"), d.gid());
        assertEquals(7, d.srqn());
        assertEquals(1, d.gidIndex());
        byte[] expected = m.clone();
        expected[20] = expected[21] = expected[22] = expected[23] = 0;
        assertArrayEquals(expected, d.encode(true));
    }

    @Test
    void destOfAnyOtherLengthIsRefused() {
        byte[] big = new byte[128];
        for (int len = 0; len <= big.length; len++) {
            if (len == 56 || len == 64) {
                continue;
            }
            int l = len;
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PingpongDest.decode(big, l));
            assertTrue(e.getMessage().contains(l + " octets"), e.getMessage());
        }
    }

    @Test
    void ourDestHasLidZeroA24BitPsnAndZeroGid() {
        PingpongDest d = PingpongDest.of(4, 0x7fabcdef, 128, 0x8a00fd00, 0x000055fab58c1000L);
        byte[] m = d.encode(false);
        assertArrayEquals(Hex.parse("00000000 00000080 00000004 00abcdef 8a00fd00 00000000 000055fab58c1000"
                + " 00000000000000000000000000000000 00000000 00000000"), m);
        assertEquals(" local address: LID 0000 QPN 0x0004 PSN 0xabcdef\n"
                + " GID: 00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00", d.describe("local").replace("\r\n", "\n"));
    }

    @Test
    void testsKeepPerftestsDefaults() {
        assertEquals(5000, PerftestTest.WRITE_BW.defaultIterations());
        assertEquals(1000, PerftestTest.READ_BW.defaultIterations());
        assertEquals(65536, PerftestTest.SEND_BW.defaultSize());
        assertEquals(2, PerftestTest.WRITE_LAT.defaultSize());
        assertEquals(128, PerftestTest.WRITE_BW.defaultTxDepth(5000));
        assertEquals(20, PerftestTest.WRITE_BW.defaultTxDepth(20));
        assertEquals(1, PerftestTest.SEND_LAT.defaultTxDepth(1000));
        assertEquals(20, PerftestTest.defaultRxDepth(20));
        assertEquals(22, PerftestTest.defaultRxDepth(21));
        assertEquals(512, PerftestTest.defaultRxDepth(1000));
    }
}
