package dev.iwarp.bootstrap;

import dev.iwarp.ift.IftSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Copies per received payload octet over IFT, counted as {@link ReceivedCopies} counts them (for MPA too):
 * {@code 2 - D / P} for P payload octets received, D of them read straight into their destination. Each case runs
 * twice on the same transport: with the framer's direct reads (as the stack binds IFT) and without them
 * ({@link IftFraming#withoutDirectReads()}: every payload read into a buffer first and copied into place, as IFT
 * received before it read directly). Payload CRCs on, so the CRC over what was read into place is what lets it
 * complete.
 */
class IftCopiesPerReceivedOctetTest {
    /** TCP ports of this test: one per transport and mode. */
    private static final int PORT = 61040;

    private final ReceivedCopies meter = new ReceivedCopies();

    @AfterEach
    void tearDown() throws Exception {
        meter.close();
    }

    /** Write, Read Response and Send copies per received payload octet. */
    private ReceivedCopies.Counts measure(Transport transport, boolean directReads, int port) throws Exception {
        IftSettings settings = IftSettings.builder().sendCrcs(true, true).checkCrcs(true, true).build();
        IftFraming framing = directReads ? IftFraming.of(settings) : IftFraming.of(settings).withoutDirectReads();
        return meter.measure(transport, framing, port);
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"NIO", "EPOLL"})
    void writeReadResponseAndSend(Transport transport) throws Exception {
        assumeTrue(transport.unavailableReason() == null);
        ReceivedCopies.Counts without = measure(transport, false, PORT + 4 * transport.ordinal());
        ReceivedCopies.Counts with = measure(transport, true, PORT + 4 * transport.ordinal() + 1);
        System.out.printf("IFT copies per received payload octet on %s: Write %.3f -> %.3f, Read Response %.3f -> %.3f,"
                + " Send %.3f -> %.3f (without -> with direct reads)%n", transport, without.write(), with.write(),
                without.readResponse(), with.readResponse(), without.send(), with.send());
        assertEquals(2.0, without.write(), 1e-9, "without direct reads every Write octet is copied twice");
        assertEquals(2.0, without.readResponse(), 1e-9, "without direct reads every Read Response octet is copied twice");
        // a Write's and a Read Response's payload octets are read straight into the region, except those a read
        // took in before the header was known (the first of a stream, a peer's segment boundary)
        assertTrue(with.write() < 1.1, "Write: " + with.write());
        assertTrue(with.readResponse() < 1.1, "Read Response: " + with.readResponse());
        assertEquals(2.0, without.send(), 1e-9, "without direct reads every Send octet is copied twice");
        // a Send that passes the untagged queue's checks is read straight into the posted receive
        assertTrue(with.send() < 1.1, "Send: " + with.send());
    }
}
