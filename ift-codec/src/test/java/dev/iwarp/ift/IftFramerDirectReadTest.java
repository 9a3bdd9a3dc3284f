package dev.iwarp.ift;

import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.testkit.ReadLoop;
import dev.iwarp.testkit.RegionSink;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static dev.iwarp.ift.IftFramer.CRC_LENGTH;
import static dev.iwarp.ift.IftFramer.PREFIX_LENGTH;
import static dev.iwarp.testkit.RegionSink.TAGGED;
import static dev.iwarp.testkit.RegionSink.UNTAGGED;
import static dev.iwarp.testkit.RegionSink.tagged;
import static dev.iwarp.testkit.RegionSink.untagged;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A large payload read into the destination the sink names ({@link IftFramer#receiveWith}): prefix and DDP
 * header checked first, the payload octets placed there (from ordinary buffers, or read straight into it through a
 * {@link DirectReadAllocator}), the payload CRC over what was read, and {@code placed} only after it matched.
 */
class IftFramerDirectReadTest {
    /** The layer above, over destination memory as a registered region would be. */
    private final RegionSink sink = new RegionSink();
    private final List<String> calls = sink.calls();
    private final List<byte[]> whole = sink.whole();

    @AfterEach
    void release() {
        sink.close();
    }

    /** The frames of {@code ulpdus} as node A sends them with these CRC fields. */
    private static byte[] stream(boolean hc, boolean pc, byte[]... ulpdus) {
        EmbeddedChannel tx = IftFramerTest.sender(hc, pc);
        byte[] wire = IftFramerTest.encode(tx, ulpdus);
        tx.finishAndReleaseAll();
        return wire;
    }

    private IftFramer framer(boolean hc, boolean pc) {
        return new IftFramer(IftFramerTest.nodeB(hc, pc, true, true, IftSettings.defaults()));
    }

    private EmbeddedChannel receiver(boolean hc, boolean pc) {
        IftFramer f = framer(hc, pc);
        EmbeddedChannel ch = new EmbeddedChannel(f);
        f.receiveWith(sink);
        return ch;
    }

    /**
     * The stream in two parts, split at every position around the header and the payload's ends: a payload of
     * which at least {@link IftFramer#DIRECT_READ_MIN} octets were still due once its header was in goes to its
     * destination (and is placed), any other frame comes whole; every combination of CRC fields.
     */
    @ParameterizedTest(name = "hc={0} pc={1}")
    @CsvSource({"true, true", "true, false", "false, true", "false, false"})
    void largePayloadGoesToItsDestinationSplitAtEveryByte(boolean hc, boolean pc) {
        int payload = IftFramer.DIRECT_READ_MIN + 3;
        byte[] big = tagged(100, payload, 1);
        byte[] small = untagged(5);
        byte[] wire = stream(hc, pc, big, small);
        int headerWire = PREFIX_LENGTH + TAGGED + (hc ? CRC_LENGTH : 0);
        for (int cut = 1; cut < wire.length; cut += cut < 64 || cut > wire.length - 64 ? 1 : 97) {
            sink.reset();
            EmbeddedChannel ch = receiver(hc, pc);
            ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, cut));
            ch.writeInbound(Unpooled.wrappedBuffer(wire, cut, wire.length - cut));
            boolean early = cut >= headerWire && cut < headerWire + payload - IftFramer.DIRECT_READ_MIN + 1;
            List<String> expected = early ? List.of("header 14+" + payload, "placed", "ulpdu 23")
                    : List.of("ulpdu " + big.length, "ulpdu 23");
            assertEquals(expected, calls, "cut at " + cut);
            if (early) {
                assertArrayEquals(Arrays.copyOfRange(big, TAGGED, big.length), sink.placed(100, payload), "cut at " + cut);
            } else {
                assertArrayEquals(big, whole.get(0), "cut at " + cut);
            }
            assertArrayEquals(small, whole.get(whole.size() - 1));
            assertTrue(ch.inboundMessages().isEmpty(), "nothing passed up the pipeline");
            assertTrue(!ch.finishAndReleaseAll());
        }
    }

    @Test
    void anUntaggedHeaderAnsweredWithNullGetsTheWholeUlpduOnce() {
        byte[] send = untagged(IftFramer.DIRECT_READ_MIN * 2);
        byte[] wire = stream(true, true, send);
        EmbeddedChannel ch = receiver(true, true);
        for (int i = 0; i < wire.length; i += 1000) {
            ch.writeInbound(Unpooled.wrappedBuffer(wire, i, Math.min(1000, wire.length - i)));
        }
        assertEquals(List.of("header 18+" + (send.length - UNTAGGED), "ulpdu " + send.length), calls);
        assertArrayEquals(send, whole.get(0));
        ch.finishAndReleaseAll();
    }

    /** F4 after the payload was placed: reported, and nothing is reported placed; nothing more is delivered. */
    @Test
    void aPayloadCrcErrorAfterPlacingIsF4AndNothingCompletes() {
        int payload = 20000;
        byte[] wire = stream(true, true, tagged(0, payload, 5), untagged(4));
        wire[PREFIX_LENGTH + TAGGED + CRC_LENGTH + 12345] ^= 1;
        EmbeddedChannel ch = receiver(true, true);
        ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, 4096));
        IftFramingException e = assertThrows(IftFramingException.class,
                () -> ch.writeInbound(Unpooled.wrappedBuffer(wire, 4096, wire.length - 4096)));
        assertEquals(IftError.PAYLOAD_CRC, e.error());
        assertEquals(List.of("header 14+" + payload), calls, "never sink.placed(), and the frame behind it not delivered");
        ch.finishAndReleaseAll();
    }

    /** A header CRC, VTag or header_size error is found before the sink is asked: nothing is placed at all. */
    @Test
    void aBadHeaderCrcIsFoundBeforeTheSinkIsAsked() {
        byte[] wire = stream(true, true, tagged(0, 20000, 6));
        wire[PREFIX_LENGTH + 5] ^= 1; // inside the DDP header: the header CRC no longer matches
        EmbeddedChannel ch = receiver(true, true);
        IftFramingException e = assertThrows(IftFramingException.class,
                () -> ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, 4096)));
        assertEquals(IftError.HEADER_CRC, e.error());
        assertEquals(List.of(), calls);
        assertArrayEquals(new byte[20000], sink.placed(0, 20000));
        ch.finishAndReleaseAll();
    }

    /**
     * The read loop with reads of random sizes over a stream of large and small frames arriving in random parts:
     * every payload lands where it belongs, every frame is delivered once, in order, and the large payloads after
     * the first are read straight into their destination, all of their octets but those a read took in before the
     * header was known.
     */
    @ParameterizedTest(name = "hc={0} pc={1}")
    @CsvSource({"true, true", "false, false", "true, false", "false, true"})
    void randomReadSizesPlaceEveryPayloadOnce(boolean hc, boolean pc) {
        Random random = new Random(hc ? (pc ? 1 : 2) : (pc ? 3 : 4));
        for (int round = 0; round < 20; round++) {
            sink.reset();
            List<byte[]> ulpdus = new ArrayList<>();
            List<String> expectedWhole = new ArrayList<>();
            int offset = 0;
            for (int i = 0; i < 5; i++) { // at most 5 x 12 KiB: inside the 64 KiB region
                int length = random.nextBoolean() ? IftFramer.DIRECT_READ_MIN + random.nextInt(4000) : random.nextInt(300);
                if (random.nextInt(4) == 0) {
                    ulpdus.add(untagged(length));
                } else {
                    ulpdus.add(tagged(offset, length, i));
                    offset += length;
                }
            }
            byte[] wire = stream(hc, pc, ulpdus.toArray(new byte[0][]));
            IftFramer f = framer(hc, pc);
            EmbeddedChannel ch = new EmbeddedChannel();
            ReadLoop reads = ReadLoop.on(ch, f);
            DirectReadAllocator alloc = reads.allocator();
            f.receiveWith(sink);
            f.readDirectlyWith(alloc);
            int at = 0;
            while (at < wire.length) {
                // the socket holds up to 30000 more octets; each read returns what it holds, at most 20000
                at = reads.readAll(ch, wire, at, Math.min(wire.length, at + 1 + random.nextInt(30000)),
                        () -> 1 + random.nextInt(20000));
            }
            String where = "round " + round;
            int w = 0;
            int c = 0;
            long large = 0;
            for (byte[] u : ulpdus) {
                boolean isTagged = (u[0] & 0x80) != 0;
                int payload = u.length - (isTagged ? TAGGED : UNTAGGED);
                if (calls.get(c).startsWith("header")) {
                    assertEquals("header " + (isTagged ? TAGGED : UNTAGGED) + "+" + payload, calls.get(c++), where);
                }
                if (isTagged && calls.get(c).equals("placed")) {
                    c++;
                    large += payload;
                } else {
                    assertEquals("ulpdu " + u.length, calls.get(c++), where);
                    assertArrayEquals(u, whole.get(w++), where);
                }
                if (isTagged) {
                    int off = ((u[2] & 0xFF) << 8) | (u[3] & 0xFF);
                    if (calls.get(c - 1).equals("placed")) {
                        assertArrayEquals(Arrays.copyOfRange(u, TAGGED, u.length), sink.placed(off, payload), where);
                    }
                }
            }
            assertEquals(calls.size(), c, where + ": " + calls);
            assertTrue(alloc.octetsReadDirectly() <= large, where);
            assertTrue(large == 0 || alloc.octetsReadDirectly() > 0, where + ": some payload read directly");
            assertTrue(ch.inboundMessages().isEmpty(), where);
            ch.finishAndReleaseAll();
        }
    }

    /**
     * A stream of messages as the DDP segmenter cuts them (a run of large frames, then a short last one), all of it in
     * the socket: each large payload is read straight into its destination, and from the second message on one read
     * brings everything between two payloads (payload CRC, the short frame, the next prefix and header): two socket
     * reads per large frame, where reading the short frame after its header took three.
     */
    @ParameterizedTest(name = "hc={0} pc={1} run={2}")
    @CsvSource({"true, true, 1", "false, false, 1", "true, false, 3", "false, true, 3"})
    void aStreamOfMessagesTakesTwoSocketReadsPerLargeFrame(boolean hc, boolean pc, int run) {
        int messages = 8;
        int large = 60000 / run;
        List<byte[]> ulpdus = new ArrayList<>();
        for (int m = 0; m < messages; m++) {
            for (int i = 0; i < run; i++) {
                ulpdus.add(tagged(i * large, large, m + i));
            }
            ulpdus.add(tagged(run * large, 700, m));
        }
        byte[] wire = stream(hc, pc, ulpdus.toArray(new byte[0][]));
        IftFramer f = framer(hc, pc);
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
                + " messages of " + run + " large frames and a short one");
        ch.finishAndReleaseAll();
    }

    /**
     * Once the header is decoded, the next receive buffer is the destination itself (the octets land there with no
     * copy of ours), then a buffer of exactly the payload CRC field and the next frame's prefix and DDP header.
     */
    @Test
    void theNextReceiveBufferIsTheDestinationThenJustTheCrcAndNextHeader() {
        int payload = 30000;
        byte[] big = tagged(8, payload, 9);
        byte[] wire = stream(false, true, big, tagged(0, 4, 2));
        IftFramer f = framer(false, true);
        EmbeddedChannel ch = new EmbeddedChannel();
        ReadLoop reads = ReadLoop.on(ch, f);
        DirectReadAllocator alloc = reads.allocator();
        f.receiveWith(sink);
        f.readDirectlyWith(alloc);

        int first = PREFIX_LENGTH + TAGGED + 100;
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
            reads.lastBytesRead(n);
            ch.writeInbound(b);
            at += n;
            due -= n;
        }
        ByteBuf t = reads.allocate();
        assertEquals(CRC_LENGTH + PREFIX_LENGTH + TAGGED, t.writableBytes(), "the CRC field and the next header only");
        t.writeBytes(wire, at, t.writableBytes());
        at += t.readableBytes();
        ch.writeInbound(t);
        assertEquals(List.of("header 14+" + payload, "placed"), calls);
        assertArrayEquals(Arrays.copyOfRange(big, TAGGED, big.length), sink.placed(8, payload));
        assertEquals(payload - 100, alloc.octetsReadDirectly());
        ch.writeInbound(Unpooled.wrappedBuffer(wire, at, wire.length - at));
        assertEquals(List.of("header 14+" + payload, "placed", "ulpdu 18"), calls);
        ch.finishAndReleaseAll();
    }
}
