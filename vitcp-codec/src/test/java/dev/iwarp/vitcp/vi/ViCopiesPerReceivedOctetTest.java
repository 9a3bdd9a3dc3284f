package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.VitcpConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Copies per received payload octet over VI/TCP (Reliable Delivery, the CRC option on), counted as
 * {@link ViReceivedCopies} says, at the default MTU (8 KiB) and the largest (65495), on NIO and epoll.
 */
class ViCopiesPerReceivedOctetTest {
    /** TCP ports of this test: one per case. */
    private static final int PORT = 62500;

    private final ViReceivedCopies meter = new ViReceivedCopies();

    @AfterEach
    void tearDown() throws Exception {
        meter.close();
    }

    @ParameterizedTest(name = "{0}, MTU {1}")
    @CsvSource({"NIO, 8192, 0", "EPOLL, 8192, 1", "NIO, 65495, 2", "EPOLL, 65495, 3"})
    void writeReadResponseAndSend(ViReceivedCopies.Transport transport, int mtu, int portOffset) throws Exception {
        assumeTrue(transport.unavailableReason() == null, transport::unavailableReason);
        VitcpConfig config = VitcpConfig.builder().reliabilityLevel(ViReliabilityLevel.RELIABLE_DELIVERY)
                .crcOption(true).mtu(mtu).build();
        ViReceivedCopies.Counts c = meter.measure(transport, config, PORT + portOffset);
        System.out.printf("VI/TCP copies per received payload octet on %s, MTU %d: Write %.3f, Read Response %.3f,"
                + " Send %.3f%n", transport, mtu, c.write(), c.readResponse(), c.send());
        System.out.printf("VI/TCP socket reads per 64 KiB of payload on %s, MTU %d: Write %.1f, Read Response %.1f,"
                + " Send %.1f%n", transport, mtu, c.writeReads(), c.readResponseReads(), c.sendReads());
        // payload octets are read straight into the region or the posted receive once the segment's header is in
        // and checked, except those a read took in together with the header (the first segment of a stream, a
        // peer's segment boundary)
        assertTrue(c.write() < 1.1, "Write: " + c.write());
        assertTrue(c.readResponse() < 1.1, "Read Response: " + c.readResponse());
        assertTrue(c.send() < 1.1, "Send: " + c.send());
    }
}
