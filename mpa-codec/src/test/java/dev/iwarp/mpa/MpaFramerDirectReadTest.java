package dev.iwarp.mpa;

import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.testkit.ReadLoop;
import dev.iwarp.testkit.RegionSink;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static dev.iwarp.testkit.RegionSink.TAGGED;
import static dev.iwarp.testkit.RegionSink.UNTAGGED;
import static dev.iwarp.testkit.RegionSink.tagged;
import static dev.iwarp.testkit.RegionSink.untagged;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A large payload read into the destination the sink names ({@link MpaFramer#receiveWith}): header first, the
 * payload octets placed there (from ordinary buffers, or read straight into it through a
 * {@link DirectReadAllocator}), CRC over what was read, and {@code placed} only after the CRC matched.
 */
class MpaFramerDirectReadTest {
    /** The layer above, over destination memory as a registered region would be. */
    private final RegionSink sink = new RegionSink();
    private final List<String> calls = sink.calls();
    private final List<byte[]> whole = sink.whole();

    @AfterEach
    void release() {
        sink.close();
    }

    /** The FPDUs of {@code ulpdus} as a sender frames them, without markers. */
    private static byte[] stream(boolean crc, byte[]... ulpdus) {
        return FpduStreams.stream(crc, false, ulpdus);
    }

    private EmbeddedChannel receiver(boolean crc) {
        MpaFramer f = new MpaFramer(crc, false, false, 65535, 65535, false);
        EmbeddedChannel ch = new EmbeddedChannel(f);
        f.receiveWith(sink);
        return ch;
    }

    @ParameterizedTest(name = "crc={0}")
    @ValueSource(booleans = {true, false})
    void largePayloadGoesToItsDestinationSplitAtEveryByte(boolean crc) {
        int payload = MpaFramer.DIRECT_READ_MIN + 3;
        byte[] big = tagged(100, payload, 1);
        byte[] small = untagged(5);
        byte[] wire = stream(crc, big, small);
        for (int cut = 1; cut < wire.length; cut += cut < 64 || cut > wire.length - 64 ? 1 : 97) {
            sink.reset();
            EmbeddedChannel ch = receiver(crc);
            ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, cut));
            ch.writeInbound(Unpooled.wrappedBuffer(wire, cut, wire.length - cut));
            boolean early = cut >= 2 + TAGGED && cut < 2 + TAGGED + payload - MpaFramer.DIRECT_READ_MIN + 1;
            List<String> expected = early ? List.of("header 14+" + payload, "placed", "ulpdu 23")
                    : List.of("ulpdu " + big.length, "ulpdu 23");
            assertEquals(expected, calls, "cut at " + cut);
            if (early) {
                assertArrayEquals(Arrays.copyOfRange(big, TAGGED, big.length), sink.placed(100, payload), "cut at " + cut);
            }
            assertArrayEquals(small, whole.get(whole.size() - 1));
            assertTrue(ch.inboundMessages().isEmpty(), "nothing passed up the pipeline");
            assertTrue(!ch.finishAndReleaseAll());
        }
    }

    @Test
    void anUntaggedHeaderAnsweredWithNullGetsTheWholeUlpduOnce() {
        byte[] send = untagged(MpaFramer.DIRECT_READ_MIN * 2);
        byte[] wire = stream(true, send);
        EmbeddedChannel ch = receiver(true);
        for (int i = 0; i < wire.length; i += 1000) {
            ch.writeInbound(Unpooled.wrappedBuffer(wire, i, Math.min(1000, wire.length - i)));
        }
        assertEquals(List.of("header 18+" + (send.length - UNTAGGED), "ulpdu " + send.length), calls);
        assertArrayEquals(send, whole.get(0));
        ch.finishAndReleaseAll();
    }

    /** RFC 5044 §8: a CRC error after placing is still reported (code 2), and nothing is completed. */
    @Test
    void aCrcErrorAfterThePayloadWasPlacedIsReportedAndNothingCompletes() {
        int payload = 20000;
        byte[] wire = stream(true, tagged(0, payload, 5));
        wire[2 + TAGGED + 12345] ^= 1;
        EmbeddedChannel ch = receiver(true);
        ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, 4096));
        MpaException e = assertThrows(MpaException.class,
                () -> ch.writeInbound(Unpooled.wrappedBuffer(wire, 4096, wire.length - 4096)));
        assertEquals(MpaErrorCode.CRC_ERROR, e.errorCode());
        assertEquals(List.of("header 14+" + payload), calls, "never placed()");
        ch.finishAndReleaseAll();
    }

    /**
     * Once a stream carried a large FPDU, every later large payload is read straight into its destination, whatever
     * the socket held when: a message's short last FPDU and the next message's header are read up to that header
     * only. The peer's octets arrive in two parts, split at every position; CRC on and off. With markers (which cut
     * payloads) nothing is read directly and every ULPDU comes whole.
     */
    @ParameterizedTest(name = "crc={0} markers={1}")
    @org.junit.jupiter.params.provider.CsvSource({"true, false", "false, false", "true, true", "false, true"})
    void afterALargeFpduEveryLargePayloadIsReadDirectlySplitAtEveryByte(boolean crc, boolean markers) {
        int large = MpaFramer.DIRECT_READ_MIN + 1000;
        byte[] first = tagged(0, large, 3);
        byte[] tail = tagged(large, 40, 4);
        byte[] second = tagged(20000, large, 5);
        byte[] wire = FpduStreams.stream(crc, markers, first, tail, second);
        int firstEnd = MpaFramer.wireLength(0, first.length, markers);
        for (int cut = firstEnd; cut <= wire.length; cut += cut < firstEnd + 64 || cut > wire.length - 64 ? 1 : 61) {
            sink.reset();
            MpaFramer f = new MpaFramer(crc, false, markers, 65535, 65535, false);
            EmbeddedChannel ch = new EmbeddedChannel();
            ReadLoop reads = ReadLoop.on(ch, f);
            DirectReadAllocator alloc = reads.allocator();
            f.receiveWith(sink);
            f.readDirectlyWith(alloc);
            sink.watch(alloc);
            int at = reads.readAll(ch, wire, 0, cut);
            reads.readAll(ch, wire, at, wire.length);
            String where = "cut at " + cut;
            if (markers) {
                assertEquals(List.of("ulpdu " + first.length, "ulpdu " + tail.length, "ulpdu " + second.length), calls,
                        where);
                assertArrayEquals(second, whole.get(2), where);
                assertEquals(0, alloc.octetsReadDirectly(), where);
            } else {
                // the stream's first large FPDU may come whole in the first ordinary read
                boolean firstPlaced = calls.get(0).startsWith("header");
                List<String> expected = new ArrayList<>(firstPlaced ? List.of("header 14+" + large, "placed")
                        : List.of("ulpdu " + first.length));
                expected.addAll(List.of("ulpdu " + tail.length, "header 14+" + large, "placed"));
                assertEquals(expected, calls, where);
                if (firstPlaced) {
                    assertArrayEquals(Arrays.copyOfRange(first, TAGGED, first.length), sink.placed(0, large), where);
                } else {
                    assertArrayEquals(first, whole.get(0), where);
                }
                assertArrayEquals(Arrays.copyOfRange(second, TAGGED, second.length), sink.placed(20000, large), where);
                assertArrayEquals(tail, whole.get(firstPlaced ? 0 : 1), where);
                assertEquals(large, alloc.octetsReadDirectly() - (firstPlaced ? sink.directAtPlaced().get(0) : 0),
                        where + ": the second payload, all of it read into its destination");
            }
            assertTrue(ch.inboundMessages().isEmpty(), where);
            ch.finishAndReleaseAll();
        }
    }

    /**
     * A stream of messages as the DDP segmenter cuts them (a run of large FPDUs, then a short last one), all of it in
     * the socket: each large payload is read straight into its destination, and from the second message on one read
     * brings everything between two payloads (pad, CRC, the short FPDU, the next header): two socket reads per large
     * FPDU, where reading the short FPDU after its header took three. No payload octet of the later messages is
     * copied from an ordinary buffer.
     */
    @ParameterizedTest(name = "crc={0} run={1}")
    @org.junit.jupiter.params.provider.CsvSource({"true, 1", "false, 1", "true, 3", "false, 3"})
    void aStreamOfMessagesTakesTwoSocketReadsPerLargeFpdu(boolean crc, int run) {
        int messages = 8;
        int large = 60000 / run;
        List<byte[]> ulpdus = new ArrayList<>();
        for (int m = 0; m < messages; m++) {
            for (int i = 0; i < run; i++) {
                ulpdus.add(tagged(i * large, large, m + i));
            }
            ulpdus.add(tagged(run * large, 700, m));
        }
        byte[] wire = FpduStreams.stream(crc, false, ulpdus.toArray(new byte[0][]));
        MpaFramer f = new MpaFramer(crc, false, false, 65535, 65535, false);
        EmbeddedChannel ch = new EmbeddedChannel();
        ReadLoop reads = ReadLoop.on(ch, f);
        DirectReadAllocator alloc = reads.allocator();
        f.receiveWith(sink);
        f.readDirectlyWith(alloc);
        sink.watch(alloc);
        reads.readAll(ch, wire, 0, wire.length);
        List<String> expected = new ArrayList<>();
        for (int m = 0; m < messages; m++) {
            for (int i = 0; i < run; i++) {
                expected.addAll(List.of("header 14+" + large, "placed"));
            }
            expected.add("ulpdu " + (TAGGED + 700));
        }
        assertEquals(expected, calls);
        assertArrayEquals(Arrays.copyOfRange(ulpdus.get(ulpdus.size() - 2), TAGGED, TAGGED + large),
                sink.placed((run - 1) * large, large));
        long firstDirect = sink.directAtPlaced().get(0); // the first read took the first payload's first octets
        assertEquals((messages * run - 1) * (long) large, alloc.octetsReadDirectly() - firstDirect,
                "every later payload octet read into its destination");
        // the first message: the first read's guess, the rest of its first payload, then as many reads as later
        long later = alloc.socketReads() - 2 - 2L * run;
        assertTrue(later <= 2L * run * (messages - 1), alloc.socketReads() + " socket reads for " + messages
                + " messages of " + run + " large FPDUs and a short one");
        ch.finishAndReleaseAll();
    }

    /** The readable octets of every buffer that passed it, which it passes on unchanged (a capture, a guard). */
    private final List<Integer> watched = new ArrayList<>();

    private ChannelInboundHandlerAdapter watcher() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                watched.add(((ByteBuf) msg).readableBytes());
                ctx.fireChannelRead(msg);
            }
        };
    }

    /**
     * Only whoever built the pipeline says whether reads may go into destinations: a framer not told so (as
     * under TLS) never steers the channel's allocator, whatever else is in the pipeline.
     */
    @Test
    void withoutReadDirectlyWithTheAllocatorIsNeverSteered() {
        int payload = 30000;
        byte[] wire = stream(true, tagged(8, payload, 9), tagged(0, 4, 2));
        MpaFramer f = new MpaFramer(true, false, false, 65535, 65535, false);
        EmbeddedChannel ch = new EmbeddedChannel();
        ReadLoop reads = ReadLoop.on(ch, f); // the first handler, yet not told
        DirectReadAllocator alloc = reads.allocator();
        f.receiveWith(sink);
        ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, 2 + TAGGED + 100));
        assertEquals(List.of("header 14+" + payload), calls, "the payload still goes to its destination");
        ByteBuf b = reads.allocate();
        assertTrue(b.writableBytes() != payload - 100 || b.memoryAddress() != sink.region().memoryAddress() + 108,
                "an ordinary buffer, not the destination");
        b.release();
        ch.writeInbound(Unpooled.wrappedBuffer(wire, 2 + TAGGED + 100, wire.length - 2 - TAGGED - 100));
        assertEquals(List.of("header 14+" + payload, "placed", "ulpdu 18"), calls);
        assertArrayEquals(Arrays.copyOfRange(tagged(8, payload, 9), TAGGED, TAGGED + payload), sink.placed(8, payload));
        assertEquals(0, alloc.octetsReadDirectly());
        ch.finishAndReleaseAll();
    }

    /**
     * The channel's read loop, played by hand: once the header is decoded, the next receive buffer is the
     * destination itself (the octets land there with no copy of ours), then a buffer of exactly pad, CRC and
     * the next DDP header.
     */
    @Test
    void theNextReceiveBufferIsTheDestinationThenJustTheTrailerAndNextHeader() {
        int payload = 30000;
        byte[] big = tagged(8, payload, 9);
        byte[] wire = stream(true, big, tagged(0, 4, 2));
        MpaFramer f = new MpaFramer(true, false, false, 65535, 65535, false);
        EmbeddedChannel ch = new EmbeddedChannel();
        ReadLoop reads = ReadLoop.on(ch);
        DirectReadAllocator alloc = reads.allocator();
        ch.pipeline().addLast(watcher(), f); // below the framer, as serve's guard and log context are
        f.receiveWith(sink);
        f.readDirectlyWith(alloc);

        int first = 2 + TAGGED + 100;
        ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, first));
        assertEquals(List.of("header 14+" + payload), calls);
        int at = first;
        int due = payload - 100;
        while (due > 0) {
            ByteBuf b = reads.allocate();
            assertEquals(due, b.writableBytes(), "sized to the payload still due");
            assertEquals(sink.region().memoryAddress() + 8 + payload - due, b.memoryAddress() + b.writerIndex(),
                    "the region's own memory");
            int n = Math.min(due, 7000); // the kernel's copy
            b.writeBytes(wire, at, n);
            ch.writeInbound(b);
            assertEquals(n, watched.get(watched.size() - 1), "a handler below sees each read's octets alone");
            at += n;
            due -= n;
        }
        ByteBuf t = reads.allocate();
        int trailer = ((-(2 + big.length)) & 3) + 4;
        assertEquals(trailer + 2 + TAGGED, t.writableBytes(), "pad, CRC and the next header only");
        t.writeBytes(wire, at, t.writableBytes());
        at += t.readableBytes();
        ch.writeInbound(t);
        assertEquals(List.of("header 14+" + payload, "placed"), calls);
        assertArrayEquals(Arrays.copyOfRange(big, TAGGED, big.length), sink.placed(8, payload));
        ByteBuf rest = reads.allocate();
        // a small FPDU right after a large one is read up to the next FPDU's header as well
        assertEquals(wire.length - at + 2 + TAGGED, rest.writableBytes(), "the small FPDU and the next header");
        rest.writeBytes(wire, at, wire.length - at);
        ch.writeInbound(rest);
        assertEquals(List.of("header 14+" + payload, "placed", "ulpdu 18"), calls);
        assertSame(null, ch.readInbound());
        ch.finishAndReleaseAll();
    }
}
