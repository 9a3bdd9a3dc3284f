package dev.iwarp.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The wire check's traffic ({@code interop/wire-check.sh}) without the capture: every variant
 * completes as {@link WireTraffic} checks it (and without leaks, under the test kit's detector), and
 * the expectations name every RDMAP OpCode our stack sends.
 */
class WireTrafficTest {

    @Test
    void everyVariantRunsAndEveryOpcodeIsExpected(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("expect.tsv");
        assertEquals(List.of(), WireTraffic.run(0, out));
        List<String> lines = Files.readAllLines(out);
        assertEquals(WireTraffic.VARIANTS.size(), lines.stream().filter(l -> l.startsWith("conn\t")).count());
        Set<String> opcodes = new TreeSet<>();
        for (String l : lines) {
            for (String f : l.split("\t")) {
                if (f.startsWith("OpCode=")) {
                    opcodes.add(f.substring("OpCode=".length()));
                }
            }
        }
        // RFC 5040 §4.2 OpCodes 0x0-0x7 and RFC 7306's 0x8-0xB
        assertEquals(new TreeSet<>(List.of("0x0", "0x1", "0x2", "0x3", "0x4", "0x5", "0x6", "0x7", "0x8", "0x9", "0xa",
                "0xb")), opcodes);
    }
}
