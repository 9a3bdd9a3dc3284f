package dev.iwarp.framing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.RecvByteBufAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The direct-read driver against a framing of its own making: 2 octets in front of a 4-octet ULPDU header,
 * {@code after} octets between header and payload, a 1-octet trailer that must equal the number of payload
 * octets the check saw (mod 256). What the driver owns: when the sink is asked, what it is shown, what is copied,
 * what the check sees, how reads are sized, and that the destination is released on every path.
 */
class DirectPayloadReaderTest {
    private static final int MIN = 100;
    private static final int HEADER = 4;

    private final ByteBuf region = ByteBufAllocator.DEFAULT.directBuffer(1024, 1024);
    private final List<String> events = new ArrayList<>();
    private int checked;

    private final PayloadCheck check = new PayloadCheck() {
        @Override
        public void start(ByteBuf frame, int payloadIndex) {
            checked = frame.writerIndex() - payloadIndex;
            events.add("start " + checked);
        }

        @Override
        public void update(ByteBuf destination, int index, int length) {
            checked += length;
            events.add("update " + length);
        }

        @Override
        public void checkTrailer(ChannelHandlerContext ctx, ByteBuf in, int trailer) {
            if (in.getUnsignedByte(in.readerIndex()) != (checked & 0xFF)) {
                throw new IllegalStateException("trailer mismatch");
            }
        }
    };

    private final UlpduSink sink = new UlpduSink() {
        @Override
        public int headerLength(int firstOctet) {
            return firstOctet == 0 ? -1 : HEADER;
        }

        @Override
        public ByteBuf payloadDestination(ByteBuf ulpdu, int headerLength, int payloadLength) {
            events.add("asked " + ulpdu.readableBytes() + " " + headerLength + "+" + payloadLength);
            return ulpdu.getUnsignedByte(ulpdu.readerIndex()) == 2 ? null
                    : region.retainedSlice(0, payloadLength).clear();
        }

        @Override
        public void placed() {
            events.add("placed");
        }

        @Override
        public void ulpdu(ByteBuf ulpdu) {
            events.add("ulpdu");
        }
    };

    /** The channel's allocator, and the handle Netty's read loop allocates through. */
    private final DirectReadAllocator alloc = new DirectReadAllocator(new AdaptiveRecvByteBufAllocator());
    @SuppressWarnings("deprecation") // a Netty 4.2 allocator hands out its handle as the deprecated Handle type
    private final RecvByteBufAllocator.ExtendedHandle handle = (RecvByteBufAllocator.ExtendedHandle) alloc.newHandle();

    @AfterEach
    void release() {
        assertEquals(1, region.refCnt(), "every destination was released");
        region.release();
    }

    /** A unit's first {@code here} octets: 2 in front, the header (first octet {@code kind}), {@code after}, payload. */
    private static ByteBuf unit(int kind, int after, int here) {
        ByteBuf b = Unpooled.buffer(here);
        for (int i = 0; i < here; i++) {
            b.writeByte(i == 2 ? kind : i);
        }
        return b;
    }

    private DirectPayloadReader reader(int after) {
        DirectPayloadReader r = new DirectPayloadReader(check, MIN, 2, after);
        r.receiveWith(sink);
        r.newFrame();
        return r;
    }

    /** A reader whose socket reads go through {@link #alloc}. */
    private DirectPayloadReader directReader(int after) {
        DirectPayloadReader r = reader(after);
        r.readDirectlyWith(alloc);
        return r;
    }

    @Test
    void aPayloadWithFewerThanTheMinimumStillDueIsNotAskedFor() {
        DirectPayloadReader r = reader(0);
        ByteBuf in = unit(1, 0, 2 + HEADER + 10);
        assertFalse(r.begin(in, 2, HEADER, 2 + HEADER, 10 + MIN - 1));
        assertFalse(r.asked());
        assertEquals(List.of(), events);
        assertEquals(0, in.readerIndex());
        in.release();
    }

    @Test
    void aNullAnswerLeavesTheUnitToTheFramingAndIsNotAskedAgain() {
        DirectPayloadReader r = reader(0);
        ByteBuf in = unit(2, 0, 2 + HEADER);
        assertFalse(r.begin(in, 2, HEADER, 2 + HEADER, 500));
        assertTrue(r.asked());
        assertEquals(0, in.readerIndex(), "indexes as they were");
        assertEquals(2 + HEADER, in.writerIndex());
        in.release();
    }

    @Test
    void theSinkSeesTheHeaderAndThePayloadBehindItOnlyWhenTheyAreContiguous() {
        ByteBuf in = unit(1, 0, 2 + HEADER + 10);
        DirectPayloadReader r = reader(0);
        assertTrue(r.begin(in, 2, HEADER, 2 + HEADER, 500));
        r.abandon();
        in.release();
        in = unit(1, 3, 2 + HEADER + 3 + 10);
        r = reader(3);
        assertTrue(r.begin(in, 2, HEADER, 2 + HEADER + 3, 500));
        r.abandon();
        in.release();
        assertEquals(List.of("asked 14 4+500", "start 10", "asked 4 4+500", "start 10"), events);
    }

    /** Copy-in, reads into the destination, the check over every payload octet, the trailer, release. */
    @Test
    void thePayloadIsReadIntoTheDestinationAndCheckedBeforeItCompletes() {
        DirectPayloadReader r = directReader(0);
        ByteBuf in = unit(1, 0, 2 + HEADER + 10);
        assertTrue(r.begin(in, 2, HEADER, 2 + HEADER, 300));
        assertFalse(in.isReadable(), "the unit's octets here were taken");
        assertFalse(r.copyIn(in));

        ByteBuf read = allocate();
        assertTrue(r.isDestination(read), "the next socket read goes into the destination");
        assertEquals(290, read.writableBytes(), "sized to the payload still due");
        read.writeZero(200);
        assertFalse(r.payloadRead(1));
        read.writeZero(90);
        assertTrue(r.payloadRead(1), "complete");
        read.release();
        ByteBuf next = allocate();
        assertEquals(1 + 2 + HEADER, next.writableBytes(), "the trailer and the next unit's header only");
        next.release();

        ByteBuf trailer = Unpooled.buffer(4);
        assertFalse(r.readTrailer(null, trailer, 1));
        trailer.writeByte(300 & 0xFF).writeByte(9);
        assertTrue(r.readTrailer(null, trailer, 1));
        assertEquals(1, trailer.readerIndex(), "the trailer skipped, what follows left");
        assertFalse(r.abandon(), "released already");
        assertEquals(List.of("asked 14 4+300", "start 10", "update 200", "update 90"), events);
        trailer.release();
        in.release();
    }

    @Test
    void aTrailerMismatchThrowsTheFramingsErrorAndReleasesTheDestination() {
        DirectPayloadReader r = reader(0);
        ByteBuf in = unit(1, 0, 2 + HEADER + 10);
        assertTrue(r.begin(in, 2, HEADER, 2 + HEADER, 110));
        ByteBuf rest = Unpooled.buffer(101).writeZero(100).writeByte(111);
        assertTrue(r.copyIn(rest));
        assertTrue(r.payloadRead(1));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> r.readTrailer(null, rest, 1));
        assertEquals("trailer mismatch", e.getMessage());
        assertFalse(r.abandon(), "released by the driver");
        rest.release();
        in.release();
    }

    @Test
    void readsAroundLargeUnitsEndAtTheNextHeader() {
        DirectPayloadReader r = directReader(3);
        // a large unit whose header is not all here: read to the end of it
        r.sizeNextRead(5, 2 + HEADER + 3, MIN, 2 + HEADER + 3 + MIN + 1, MIN);
        assertEquals(4, allocated());
        // after a large unit, the next two are read header first (once nothing of them is here)
        ByteBuf empty = Unpooled.EMPTY_BUFFER;
        r.frameDone(empty, MIN, 2 + HEADER + 3 + MIN + 1);
        assertEquals(2 + HEADER + 3, allocated());
        r.frameDone(empty, 1, 2 + HEADER + 3 + 1 + 1);
        assertEquals(2 + HEADER + 3, allocated());
        r.frameDone(empty, 1, 2 + HEADER + 3 + 1 + 1);
        assertNull(limited(), "the second small unit in a row ends it");
    }

    /**
     * A peer's messages repeat: each a run of large units, then small ones (a message's short last unit). Once a run
     * is as long as the one the last small units followed, the read after it takes those small units and the next
     * large unit's header too, so that one read brings all that lies between two payloads read directly.
     */
    @Test
    void afterARunOfLargeUnitsAsLongAsTheLastTheReadTakesTheSmallUnitsThatFollowedItAndTheNextHeader() {
        DirectPayloadReader r = directReader(0);
        int span = 2 + HEADER;
        int largeWire = span + MIN + 1;
        int smallWire = 30;
        ByteBuf empty = Unpooled.EMPTY_BUFFER;
        for (int message = 0; message < 3; message++) {
            for (int unit = 0; unit < 2; unit++) { // a run of two large units, read directly
                r.newFrame();
                ByteBuf in = unit(1, 0, span);
                assertTrue(r.begin(in, 2, HEADER, span, MIN));
                in.release();
                ByteBuf read = allocate();
                read.writeZero(MIN);
                assertTrue(r.payloadRead(1));
                read.release();
                boolean last = unit == 1 && message > 0; // the first message's gap is not known yet
                assertEquals(1 + (last ? 2 * smallWire : 0) + span, allocated(),
                        "message " + message + " unit " + unit + ": the trailer, the gap expected, the next header");
                ByteBuf trailer = Unpooled.buffer(1).writeByte(MIN & 0xFF);
                assertTrue(r.readTrailer(null, trailer, 1));
                trailer.release();
                r.frameDone(empty, MIN, largeWire);
                assertEquals(last ? 2 * smallWire + span : span, allocated(), "nothing of the next unit here");
            }
            for (int unit = 0; unit < 2; unit++) { // then two small ones
                r.newFrame();
                r.sizeNextRead(10, span, 10, smallWire, 10);
                int expected = message > 0 ? (2 - unit) * smallWire - 10 + span : smallWire - 10 + span;
                assertEquals(expected, allocated(), "message " + message + " small unit " + unit);
                r.frameDone(empty, 10, smallWire);
                allocated();
            }
        }
        // a run of one large unit: the gap followed runs of two, so none is expected after it
        r.newFrame();
        r.sizeNextRead(span, span, MIN, largeWire, MIN);
        assertEquals(largeWire - span + span, allocated(), "a run of one: no gap expected after it");
    }

    @SuppressWarnings("deprecation")
    private ByteBuf allocate() {
        return handle.allocate(ByteBufAllocator.DEFAULT);
    }

    /** The size of the next read's buffer. */
    private int allocated() {
        ByteBuf b = allocate();
        try {
            return b.writableBytes();
        } finally {
            b.release();
        }
    }

    /** Null when the next read is the wrapped allocator's own guess (no limit), else its size. */
    private Integer limited() {
        int n = allocated();
        return n >= 1024 ? null : n;
    }
}
