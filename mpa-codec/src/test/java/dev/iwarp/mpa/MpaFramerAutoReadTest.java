package dev.iwarp.mpa;

import dev.iwarp.testkit.ReadRequests;
import dev.iwarp.testkit.RegionSink;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static dev.iwarp.mpa.FpduStreams.stream;
import static dev.iwarp.testkit.RegionSink.tagged;
import static dev.iwarp.testkit.RegionSink.untagged;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * With auto-read off, the framer asks for another socket read only while no FPDU completed in the read batch,
 * wherever its ULPDU went (up the pipeline, or to the sink the RDMA core binds): a ULP that stops reading stops
 * taking the peer's FPDUs, so the peer's sends stall (TCP flow control), as they would over a plain decoder.
 */
class MpaFramerAutoReadTest {
    private final RegionSink sink = new RegionSink();

    @AfterEach
    void release() {
        sink.close();
    }

    @ParameterizedTest(name = "markers={0} sink={1}")
    @CsvSource({"true,true", "false,true", "true,false", "false,false"})
    void withAutoReadOffTheFramerStopsReadingOnceAnFpduCompleted(boolean markers, boolean toSink) {
        ReadRequests reads = new ReadRequests();
        MpaFramer framer = new MpaFramer(true, false, markers, 65535, 65535, false);
        EmbeddedChannel ch = new EmbeddedChannel(reads, framer);
        if (toSink) {
            framer.receiveWith(sink);
        }
        ch.config().setAutoRead(false); // the ULP stops reading
        int asked = reads.asked();
        byte[] three = stream(true, markers, untagged(700), tagged(0, 3000, 7), untagged(20));
        byte[] wire = stream(true, markers, untagged(700), tagged(0, 3000, 7), untagged(20), untagged(40));

        ch.writeInbound(Unpooled.wrappedBuffer(wire, 0, 100));
        assertEquals(asked + 1, reads.asked(), "a partial FPDU is nothing the ULP can act on: one more read");
        ch.writeInbound(Unpooled.wrappedBuffer(wire, 100, 1000));
        assertEquals(asked + 1, reads.asked(), "an FPDU completed: the next read is the ULP's to ask for");
        ch.writeInbound(Unpooled.wrappedBuffer(wire, 1100, three.length - 1100));
        assertEquals(asked + 1, reads.asked(), "the rest completed two more: still none asked for");
        assertEquals(toSink ? 3 : 0, sink.calls().size(), "every ULPDU reached the sink when one is bound");
        ch.writeInbound(Unpooled.wrappedBuffer(wire, three.length, 10));
        assertEquals(asked + 2, reads.asked(), "again only part of an FPDU: one more read, as at first");
        ch.writeInbound(Unpooled.wrappedBuffer(wire, three.length + 10, wire.length - three.length - 10));
        assertEquals(asked + 2, reads.asked(), "that FPDU completed");
        assertEquals(toSink ? 4 : 0, sink.calls().size());
        ch.finishAndReleaseAll();
    }
}
