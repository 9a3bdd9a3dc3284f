package dev.iwarp.testkit;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HexTest {

    @Test
    void parsesAnnotatedHex() {
        byte[] expected = {0x4d, 0x50, 0x41, 0x20, (byte) 0xab, (byte) 0xCD, 0x00, 0x01};
        String text = """
                4d50 4120   // "MPA " -- a comment: ignored, even "ff" in it
                AB:cd       # colons and upper case
                \t00 01\r
                # a whole comment line
                """;
        assertArrayEquals(expected, Hex.parse(text));
        assertArrayEquals(new byte[0], Hex.parse(" // nothing\n"));
        assertArrayEquals(new byte[] {0x12}, Hex.parse("1 2")); // digits pair up regardless of spacing
    }

    @Test
    void rejectsBadInput() {
        assertThrows(IllegalArgumentException.class, () -> Hex.parse("abc"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Hex.parse("00\n0x01"));
        assertTrue(e.getMessage().contains("'x'") && e.getMessage().contains("line 2"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Hex.parse("00 / 01")); // a lone slash is no comment
    }

    @Test
    void dumpsSixteenBytesALineWithOffsetAndAscii() {
        byte[] request = Hex.parse("4d504120494420526571204672616d6550020004 00010001");
        assertEquals("""
                4d 50 41 20 49 44 20 52  65 71 20 46 72 61 6d 65  // 0000 MPA ID Req Frame
                50 02 00 04 00 01 00 01                           // 0010 P.......
                """, Hex.dump(request));
        assertEquals("", Hex.dump(new byte[0]));
        assertEquals("4d504120", Hex.toHex(new byte[] {0x4d, 0x50, 0x41, 0x20}));
    }

    @Test
    void parseReadsBackDumpAndToHex() {
        Random random = new Random(7);
        for (int length : new int[] {0, 1, 15, 16, 17, 100}) {
            byte[] v = new byte[length];
            random.nextBytes(v);
            assertArrayEquals(v, Hex.parse(Hex.dump(v)));
            assertArrayEquals(v, Hex.parse(Hex.toHex(v)));
        }
    }
}
