package dev.iwarp.server;

import dev.iwarp.sctp.IndicationTransport;
import dev.iwarp.server.wire.SctpWire;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code --wire sctp} where the platform has no SCTP (this build machine: no libsctp.so.1, no sctp
 * kernel module): every command refuses with one line saying what is missing and exit code 2. The
 * live runs are in the sctp-vm guest ({@code interop/sctp-guest.sh}).
 */
class SctpCommandsTest {

    private static String[] run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new String[] {String.valueOf(code), out.toString(), err.toString()};
    }

    @Test
    void everyCommandRefusesCleanlyWithoutSctp() {
        String missing = SctpWire.unavailableReason(IndicationTransport.NATIVE);
        assumeTrue(missing != null, "this machine has SCTP: the refusal cannot be seen here");
        for (String[] args : new String[][] {
            {"serve", "--wire", "sctp"}, {"ping", "--wire", "sctp", "127.0.0.1"},
            {"bench", "--wire", "sctp", "127.0.0.1"}, {"demo", "--wire", "sctp"}}) {
            String[] r = run(args);
            assertEquals("2", r[0], String.join(" ", args) + ": " + r[2]);
            String line = r[2].trim();
            assertFalse(line.contains("\n"), "one line: " + line);
            assertTrue(line.contains("libsctp.so.1") || line.contains("kernel"), line);
            assertFalse(line.contains("Exception\n\tat"), line);
        }
    }

    @Test
    void helpDocumentsTheSctpWireAndItsPort() {
        String[] r = run("serve", "--help");
        assertTrue(r[1].contains("sctp"), r[1]);
        assertTrue(r[1].contains("7177"), r[1]);
        assertTrue(r[1].contains("--sctp-indication"), r[1]);
    }
}
