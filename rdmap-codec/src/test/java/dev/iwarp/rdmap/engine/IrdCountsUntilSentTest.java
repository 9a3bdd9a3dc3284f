package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.rdmap.ReadRequestHeader;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.QpState;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static dev.iwarp.rdmap.engine.RdmaEngineErrorsTest.terminateSentBy;
import static dev.iwarp.rdmap.engine.RdmaEngineErrorsTest.ulpdu;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * A Read Request holds its IRD slot until its response left (the write completed), as on an RNIC, also when the
 * response is copied on its way down (CRC over a region peers may write, or a zero-length response): IRD + 1
 * requests in one read batch draw the Terminate for a Request beyond IRD whatever the response's size or copy.
 */
class IrdCountsUntilSentTest extends EnginePairTest {

    @ParameterizedTest(name = "IRD {0}, {1} requests of {2} octets, CRC {3}")
    @CsvSource({"1, 2, 64, false", "1, 2, 64, true", "1, 2, 0, true", "2, 3, 0, true", "2, 4, 0, true",
            "4, 5, 16, true"})
    void requestsBeyondIrdInOneBatchAreTerminated(int ird, int requests, int size, boolean crc) {
        pair = new EnginePair(p -> p.digestsPayload(crc), p -> p.ird(ird).digestsPayload(crc));
        MemoryRegion src = pair.responder.register(pair.responder.buffer(64, 9), Access.REMOTE_READ,
                Access.REMOTE_WRITE);
        ByteBuf[] ulpdus = new ByteBuf[requests];
        for (int msn = 1; msn <= requests; msn++) {
            ByteBuf hdr = Unpooled.buffer(28);
            new ReadRequestHeader(0x1234, 0, size, src.stag(), src.iova()).encode(hdr);
            ulpdus[msn - 1] = ulpdu(new DdpUntaggedSegment(true, 0x41, 0, 1, msn, 0, hdr));
        }
        pair.responder.ch.writeInbound((Object[]) ulpdus); // one read batch: no response left before the last
        TerminateMessage t = terminateSentBy(pair.responder);
        assertEquals(new TerminateCause(0, 2, 0x07), t.cause(), "beyond IRD");
        assertFalse(pair.responder.ch.isOpen());
    }

    @ParameterizedTest(name = "IRD {0}, CRC {1}")
    @CsvSource({"1, false", "1, true", "3, true"})
    void requestsUpToIrdInOneBatchAreAnswered(int ird, boolean crc) {
        pair = new EnginePair(p -> p.digestsPayload(crc), p -> p.ird(ird).digestsPayload(crc));
        MemoryRegion src = pair.responder.register(pair.responder.buffer(64, 9), Access.REMOTE_READ,
                Access.REMOTE_WRITE);
        ByteBuf[] ulpdus = new ByteBuf[ird];
        for (int msn = 1; msn <= ird; msn++) {
            ByteBuf hdr = Unpooled.buffer(28);
            new ReadRequestHeader(0x1234, 0, 16, src.stag(), src.iova()).encode(hdr);
            ulpdus[msn - 1] = ulpdu(new DdpUntaggedSegment(true, 0x41, 0, 1, msn, 0, hdr));
        }
        pair.responder.ch.writeInbound((Object[]) ulpdus);
        pair.responder.ch.runPendingTasks();
        assertEquals(QpState.RTS, pair.responder.qp.state());
        for (Object o; (o = pair.responder.ch.readOutbound()) != null; ) {
            io.netty.util.ReferenceCountUtil.release(o);
        }
    }
}
