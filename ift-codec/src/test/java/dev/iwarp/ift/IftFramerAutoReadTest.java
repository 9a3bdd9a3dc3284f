package dev.iwarp.ift;

import dev.iwarp.testkit.ReadRequests;
import dev.iwarp.testkit.RegionSink;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static dev.iwarp.testkit.RegionSink.tagged;
import static dev.iwarp.testkit.RegionSink.untagged;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * With auto-read off, the framer asks for another socket read only while no frame completed in the read batch,
 * wherever its ULPDU went (up the pipeline, or to the sink the RDMA core binds): a ULP that stops reading stops
 * taking the peer's frames, so the peer's sends stall (TCP flow control), as they would over a plain decoder.
 */
class IftFramerAutoReadTest {
    private final RegionSink sink = new RegionSink();

    @AfterEach
    void release() {
        sink.close();
    }

    private static byte[] stream(byte[]... ulpdus) {
        EmbeddedChannel tx = IftFramerTest.sender(true, true);
        byte[] wire = IftFramerTest.encode(tx, ulpdus);
        tx.finishAndReleaseAll();
        return wire;
    }

    @ParameterizedTest(name = "sink={0}")
    @ValueSource(booleans = {true, false})
    void withAutoReadOffTheFramerStopsReadingOnceAFrameCompleted(boolean toSink) {
        ReadRequests reads = new ReadRequests();
        IftFramer framer = new IftFramer(IftFramerTest.nodeB(true, true, true, true, IftSettings.defaults()));
        EmbeddedChannel ch = new EmbeddedChannel(reads, framer);
        if (toSink) {
            framer.receiveWith(sink);
        }
        ch.config().setAutoRead(false); // the ULP stops reading
        int asked = reads.asked();
        byte[] three = stream(untagged(700), tagged(0, 3000, 7), untagged(20));
        byte[] wire = stream(untagged(700), tagged(0, 3000, 7), untagged(20), untagged(40));

        ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, 100));
        assertEquals(asked + 1, reads.asked(), "a partial frame is nothing the ULP can act on: one more read");
        ch.writeInbound(Unpooled.wrappedBuffer(wire, 100, 1000));
        assertEquals(asked + 1, reads.asked(), "a frame completed: the next read is the ULP's to ask for");
        ch.writeInbound(Unpooled.wrappedBuffer(wire, 1100, three.length - 1100));
        assertEquals(asked + 1, reads.asked(), "the rest completed two more: still none asked for");
        ch.writeInbound(Unpooled.wrappedBuffer(wire, three.length, 10));
        assertEquals(asked + 2, reads.asked(), "again only part of a frame: one more read, as at first");
        ch.writeInbound(Unpooled.wrappedBuffer(wire, three.length + 10, wire.length - three.length - 10));
        assertEquals(asked + 2, reads.asked(), "that frame completed");
        assertEquals(toSink ? 4 : 0, sink.calls().size(), "every ULPDU reached the sink when one is bound");
        ch.finishAndReleaseAll();
    }
}
