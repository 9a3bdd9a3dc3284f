package dev.iwarp.mpa;

import dev.iwarp.testkit.ChannelOctets;
import dev.iwarp.testkit.ReadLoop;
import dev.iwarp.testkit.RegionSink;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static dev.iwarp.testkit.RegionSink.TAGGED;
import static dev.iwarp.testkit.RegionSink.UNTAGGED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The direct-read path against the traffic an rping server sends with CRC on (Linux siw: 65535-octet RDMA Writes as
 * FPDUs of at most 32,748 payload octets, Sends and Read Requests between them), the socket returning whatever it
 * holds in reads of random size (1-64 octets a quarter of the time, else up to 20,000), as a slow or emulated peer's
 * segments arrive. Each seed is one stream; every payload must land in its place intact, every CRC must match, and
 * nothing may be left over or leaked.
 */
class MpaDirectReadRandomReadsTest {
    @Test
    void everyPayloadLandsIntactWhateverTheReadSizes() {
        for (int seed = 0; seed < 60; seed++) {
            run(seed);
        }
    }

    private void run(int seed) {
        Random rnd = new Random(seed);
        RegionSink sink = new RegionSink();
        // as siw sends them: Writes of up to 65535 octets in FPDUs of at most 32748, small untagged ULPDUs between
        List<byte[]> ulpdus = new ArrayList<>();
        for (int m = 0; m < 6; m++) {
            int total = rnd.nextBoolean() ? 65535 : 1 + rnd.nextInt(65535);
            int off = 0;
            int s = rnd.nextInt(256);
            while (off < total) {
                int n = Math.min(32748, total - off);
                byte[] u = new byte[TAGGED + n];
                u[0] = (byte) 0xC1;
                u[2] = (byte) ((off % 30000) >> 8);
                u[3] = (byte) (off % 30000);
                for (int i = TAGGED; i < u.length; i++) {
                    u[i] = (byte) (i * 31 + s + off);
                }
                ulpdus.add(u);
                off += n;
            }
            int sends = rnd.nextInt(3);
            for (int k = 0; k < sends; k++) {
                byte[] u = new byte[UNTAGGED + (rnd.nextBoolean() ? 16 : 28)];
                u[0] = 0x41;
                for (int i = UNTAGGED; i < u.length; i++) {
                    u[i] = (byte) rnd.nextInt();
                }
                ulpdus.add(u);
            }
        }
        EmbeddedChannel tx = new EmbeddedChannel(new MpaFramer(true, false, false, 65535, 65535, false));
        for (byte[] u : ulpdus) {
            tx.writeOutbound(Unpooled.wrappedBuffer(u));
        }
        byte[] wire = ChannelOctets.drainOutbound(tx);
        tx.finishAndReleaseAll();

        MpaFramer f = new MpaFramer(true, false, false, 65535, 65535, false);
        EmbeddedChannel ch = new EmbeddedChannel();
        ReadLoop reads = ReadLoop.on(ch, f);
        f.receiveWith(sink);
        f.readDirectlyWith(reads.allocator());
        try {
            reads.readAll(ch, wire, 0, wire.length,
                    () -> rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(64) : 1 + rnd.nextInt(20000));
        } catch (RuntimeException e) {
            throw new AssertionError("seed " + seed + " of " + wire.length + " octets, calls " + sink.calls(), e);
        }
        List<byte[]> received = sink.received();
        assertEquals(ulpdus.size(), received.size(), "seed " + seed + " " + sink.calls());
        int c = 0;
        for (int i = 0; i < ulpdus.size(); i++) {
            byte[] u = ulpdus.get(i);
            if (sink.calls().get(c).startsWith("header")) {
                c++;
            }
            // placed: the payload the region holds; else the whole ULPDU
            byte[] expected = sink.calls().get(c++).equals("placed") ? Arrays.copyOfRange(u, TAGGED, u.length) : u;
            assertArrayEquals(expected, received.get(i), "seed " + seed + " ULPDU " + i);
        }
        ch.finishAndReleaseAll();
        sink.close();
    }
}
