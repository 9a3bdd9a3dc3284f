package dev.iwarp.rdmap.engine;

import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.SendRequest;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A responder with a Read Response rate sends what a peer's Read Requests ask for at that rate: a burst (10 ms of
 * the rate, at least 64 KiB), then as the clock advances; the Read completes with every octet.
 */
class ReadResponseRateTest extends EnginePairTest {

    private static int readResponseOctets(EngineSide side, int from) {
        int n = 0;
        for (int i = from; i < side.written.size(); i++) {
            EngineSide.Recorded r = side.written.get(i);
            if (r.tagged && r.opcode() == 2) {
                n += r.payloadLength;
            }
        }
        return n;
    }

    /** The Read {@link #postRead} posted: its two sides, its sink, and the responder's first write after it. */
    private record PostedRead(EngineSide a, EngineSide b, MemoryRegion sink, int before) {
    }

    /**
     * A pair whose responder sends Read Responses at {@code rate} octets a second, both clocks frozen before anything
     * is scheduled, and a Read of {@code size} octets (0x42 each) posted by the initiator, not yet pumped.
     */
    private PostedRead postRead(long rate, int size) {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        a.ch.freezeTime();
        b.ch.freezeTime();
        b.engine.readResponseRate(rate);
        MemoryRegion source = b.register(b.buffer(size, 0x42), Access.REMOTE_READ);
        MemoryRegion sink = a.register(a.buffer(size, 0), Access.LOCAL_WRITE);
        int before = b.written.size();
        a.qp.postSend(SendRequest.rdmaRead(1, sink.all(), source.stag(), source.iova()));
        return new PostedRead(a, b, sink, before);
    }

    @Test
    void readResponsesLeaveAtTheConfiguredRate() {
        int size = 256 * 1024;
        PostedRead read = postRead(128 * 1024, size); // 128 KiB/s: a burst of 64 KiB
        EngineSide a = read.a();
        EngineSide b = read.b();
        MemoryRegion sink = read.sink();
        int before = read.before();
        pair.pump();
        int mulpdu = b.qp.connectionParameters().mulpdu();
        int sent = readResponseOctets(b, before);
        assertTrue(sent >= 64 * 1024 && sent < 64 * 1024 + mulpdu, "the burst only: " + sent);
        assertEquals(0, a.sendCq.size(), "the Read is not complete yet");

        b.ch.advanceTimeBy(500, TimeUnit.MILLISECONDS); // 64 KiB more
        pair.pump();
        int later = readResponseOctets(b, before);
        assertTrue(later >= 128 * 1024 - mulpdu && later < 128 * 1024 + mulpdu, "burst + 0.5 s of rate: " + later);

        b.ch.advanceTimeBy(2, TimeUnit.SECONDS);
        pair.pump();
        b.ch.advanceTimeBy(2, TimeUnit.SECONDS);
        pair.pump();
        assertEquals(size, readResponseOctets(b, before));
        Completion c = a.sendCq.poll();
        assertTrue(c != null && c.isSuccess(), String.valueOf(c));
        assertEquals(0x42, sink.memory().getByte(size - 1));
    }

    @Test
    void aPeerReadingFasterThanTheRateWakesTheResponderAtMostOnceAMillisecond() {
        int size = 8 << 20;
        PostedRead read = postRead(64L << 20, size); // 64 MiB/s: bursts of 10 ms (671,088 octets)
        EngineSide a = read.a();
        EngineSide b = read.b();
        int before = read.before();
        pair.pump();
        int sent = readResponseOctets(b, before);
        int wakeUps = 0;
        int steps = 0;
        while (sent < size && steps < 10_000) { // 50 us at a time: a wake-up is a step that sent something
            b.ch.advanceTimeBy(50, TimeUnit.MICROSECONDS);
            pair.pump();
            steps++;
            int now = readResponseOctets(b, before);
            if (now > sent) {
                wakeUps++;
            }
            sent = now;
        }
        assertEquals(size, sent);
        double ms = steps * 0.05;
        // the rest after the burst at the rate: ~115 ms; resumed when a tenth of a burst (1 ms of rate) is
        // earned, not at the first octet (then once per segment, several hundred times here)
        assertTrue(ms >= 110 && ms < 130, "took " + ms + " ms");
        assertTrue(wakeUps <= ms + 1, wakeUps + " wake-ups in " + ms + " ms");
        assertTrue(a.sendCq.poll().isSuccess());
    }

    @Test
    void noLimitByDefault() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        assertEquals(0, b.device.readResponseRate());
        int size = 1 << 20;
        MemoryRegion source = b.register(b.buffer(size, 0x42), Access.REMOTE_READ);
        MemoryRegion sink = a.register(a.buffer(size, 0), Access.LOCAL_WRITE);
        a.qp.postSend(SendRequest.rdmaRead(1, sink.all(), source.stag(), source.iova()));
        pair.pump();
        assertTrue(a.sendCq.poll().isSuccess());
    }
}
