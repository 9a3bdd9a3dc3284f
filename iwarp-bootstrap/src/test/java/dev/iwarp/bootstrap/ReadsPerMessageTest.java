package dev.iwarp.bootstrap;

import dev.iwarp.ift.IftSettings;
import dev.iwarp.mpa.MpaSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Socket reads per 64 KiB message received (every read system call of the receiving side, those that found the
 * socket empty included), for RDMA Writes (sent back to back), Read Responses and Sends (one at a time), over MPA
 * with CRC on and off and over IFT, counted as {@link ReceivedCopies} counts them. A 64 KiB message is two units at
 * MPA's MULPDU on loopback (64768) and IFT's: a large one, read into place, and a short last one. The figures
 * depend on what the socket holds when it is read, so the bounds are loose; the framings' own tests count the reads
 * of a stream exactly.
 */
class ReadsPerMessageTest {
    /** TCP ports of the IFT cases: one per transport. */
    private static final int PORT = 61060;
    private static final int SIZE = 64 * 1024;
    private static final int ROUNDS = 32;

    private final ReceivedCopies meter = new ReceivedCopies();

    @AfterEach
    void tearDown() throws Exception {
        meter.close();
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"NIO, mpa-crc", "NIO, mpa-nocrc", "NIO, ift", "EPOLL, mpa-crc", "EPOLL, mpa-nocrc", "EPOLL, ift"})
    void readsPer64KiBMessage(Transport transport, String framing) throws Exception {
        assumeTrue(transport.unavailableReason() == null);
        Framing f = switch (framing) {
            case "mpa-crc" -> MpaFraming.of(MpaSettings.defaults());
            case "mpa-nocrc" -> MpaFraming.of(MpaSettings.builder().crc(false).build());
            default -> IftFraming.of(IftSettings.builder().sendCrcs(true, true).checkCrcs(true, true).build());
        };
        int port = framing.equals("ift") ? PORT + transport.ordinal() : 0;
        ReceivedCopies.Counts c = meter.measure(transport, f, port, SIZE, ROUNDS);
        System.out.printf("socket reads per 64 KiB message, %s %s: Write %.2f (%.2f empty), Read Response %.2f"
                        + " (%.2f empty), Send %.2f (%.2f empty); copies per payload octet: Write %.3f, Read Response"
                        + " %.3f, Send %.3f%n", transport, framing, c.writeReads(), c.writeEmpty(), c.readResponseReads(),
                c.readResponseEmpty(), c.sendReads(), c.sendEmpty(), c.write(), c.readResponse(), c.send());
        // each message's large payload is read into place: at least that read and the one that ends at its header
        assertTrue(c.writeReads() < 8, "Write: " + c.writeReads());
        assertTrue(c.readResponseReads() < 8, "Read Response: " + c.readResponseReads());
        assertTrue(c.sendReads() < 8, "Send: " + c.sendReads());
        assertTrue(c.write() < 1.1 && c.readResponse() < 1.1 && c.send() < 1.1, "copies " + c);
    }
}
