package dev.iwarp.mpa;

import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.framing.UlpduSink;
import dev.iwarp.testkit.ChannelOctets;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

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
    private static final int TAGGED = 14;
    private static final int UNTAGGED = 18;

    @Test
    void everyPayloadLandsIntactWhateverTheReadSizes() {
        for (int seed = 0; seed < 60; seed++) {
            run(seed);
        }
    }

    @SuppressWarnings("deprecation")
    private void run(int seed) {
        Random rnd = new Random(seed);
        ByteBuf region = ByteBufAllocator.DEFAULT.directBuffer(65536, 65536).writeZero(65536);
        List<String> calls = new ArrayList<>();
        List<byte[]> placedPayloads = new ArrayList<>();
        UlpduSink sink = new UlpduSink() {
            int to;
            int len;
            @Override
            public int headerLength(int firstOctet) {
                return (firstOctet & 0x80) != 0 ? TAGGED : UNTAGGED;
            }
            @Override
            public ByteBuf payloadDestination(ByteBuf ulpdu, int headerLength, int payloadLength) {
                if (headerLength != TAGGED) {
                    return null;
                }
                to = ulpdu.getUnsignedShort(ulpdu.readerIndex() + 2);
                len = payloadLength;
                return region.retainedSlice(to, payloadLength).clear();
            }
            @Override
            public void placed() {
                byte[] a = new byte[len];
                region.getBytes(to, a);
                calls.add("placed " + len);
                placedPayloads.add(a);
            }
            @Override
            public void ulpdu(ByteBuf ulpdu) {
                calls.add("ulpdu " + ulpdu.readableBytes());
                byte[] a = new byte[ulpdu.readableBytes()];
                ulpdu.getBytes(ulpdu.readerIndex(), a);
                placedPayloads.add(a[0] < 0 ? Arrays.copyOfRange(a, TAGGED, a.length) : a);
            }
        };
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
        DirectReadAllocator alloc = new DirectReadAllocator(new AdaptiveRecvByteBufAllocator());
        ch.config().setRecvByteBufAllocator(alloc);
        ch.pipeline().addLast(f);
        f.receiveWith(sink);
        f.readDirectlyWith(alloc);
        RecvByteBufAllocator.ExtendedHandle handle = (RecvByteBufAllocator.ExtendedHandle) alloc.newHandle();
        int at = 0;
        try {
            while (at < wire.length) {
                ByteBuf b = handle.allocate(ByteBufAllocator.DEFAULT);
                int chunk = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(64) : 1 + rnd.nextInt(20000);
                int n = Math.min(Math.min(b.writableBytes(), wire.length - at), chunk);
                b.writeBytes(wire, at, n);
                handle.lastBytesRead(n);
                at += n;
                ch.writeInbound(b);
            }
        } catch (RuntimeException e) {
            throw new AssertionError("seed " + seed + " at " + at + " of " + wire.length + " calls " + calls, e);
        }
        assertEquals(ulpdus.size(), placedPayloads.size(), "seed " + seed + " " + calls);
        for (int i = 0; i < ulpdus.size(); i++) {
            byte[] u = ulpdus.get(i);
            byte[] expected = u[0] < 0 ? Arrays.copyOfRange(u, TAGGED, u.length) : u;
            assertArrayEquals(expected, placedPayloads.get(i), "seed " + seed + " ULPDU " + i);
        }
        ch.finishAndReleaseAll();
        region.release();
    }
}
