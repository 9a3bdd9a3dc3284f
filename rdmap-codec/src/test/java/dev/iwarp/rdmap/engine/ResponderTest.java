package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpError;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.rdmap.RdmapControl;
import dev.iwarp.rdmap.RdmapError;
import dev.iwarp.rdmap.RdmapException;
import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.rdmap.ReadRequestHeader;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.RecvRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The responder alone against a {@link FakeTransmitter}: Read Requests under IRD (RFC 5040 §5.2), answered in
 * request order, each holding its IRD slot until its response left; a request beyond IRD and requests for STags
 * the peer may not use end in the Terminate RFC 5040 §7.2 and RFC 5041 §7.2 name.
 */
class ResponderTest {
    private static final int IRD = 2;
    private EngineSide side;
    private FakeTransmitter tx;
    private Responder responder;
    private MemoryRegion source;
    /** The next Read Request's MSN on QN 1 (RFC 5041 §5.3: starts at 1). */
    private int msn = 1;

    @BeforeEach
    void setUp() {
        side = new EngineSide(LlpRole.RESPONDER);
        side.establish(side.parameters().ird(IRD).build());
        tx = new FakeTransmitter(() -> { });
        responder = new Responder(side.engine.stream(), tx, side.recvCq, side.engine.stream().table(), side.pd);
        responder.start(IRD, false);
        source = side.register(side.buffer(64, 5), Access.REMOTE_READ);
    }

    @AfterEach
    void tearDown() {
        side.close();
    }

    /** The peer's Read Request of {@code size} octets from {@code sourceStag} into its sink {@code sinkStag}. */
    private void readRequest(int sinkStag, int sourceStag, long size) {
        ByteBuf header = Unpooled.buffer(ReadRequestHeader.LENGTH);
        new ReadRequestHeader(sinkStag, 0, size, sourceStag, source.all().to()).encode(header);
        DdpUntaggedSegment seg = new DdpUntaggedSegment(true, RdmapControl.encode(RdmapOpcode.RDMA_READ_REQUEST), 0,
                RdmapOpcode.Queues.READ_REQUEST, msn++, 0, header);
        try {
            responder.onReadRequest(new InboundUntagged().of(seg));
        } finally {
            seg.release();
        }
    }

    @Test
    void readResponsesLeaveInRequestOrder() {
        readRequest(0xA00, source.stag(), 16);
        readRequest(0xB00, source.stag(), 32);
        List<FakeTransmitter.Message> responses = tx.of(RdmapOpcode.RDMA_READ_RESPONSE);
        assertEquals(2, responses.size());
        assertEquals(0xA00, responses.get(0).stag(), "the first request's response first");
        assertEquals(16, responses.get(0).length());
        assertEquals(0xB00, responses.get(1).stag());
        assertEquals(32, responses.get(1).length());
        assertTrue(responses.get(0).tagged(), "a Read Response is tagged (RFC 5040 §4.5)");
    }

    @Test
    void aRequestBeyondIrdIsACatastrophicStreamError() {
        readRequest(0xA00, source.stag(), 16);
        readRequest(0xB00, source.stag(), 16);
        assertEquals(IRD, responder.irdInUse());
        RdmapException e = assertThrows(RdmapException.class, () -> readRequest(0xC00, source.stag(), 16));
        // RFC 5040 §7.2: Remote Operation Error 0x07, catastrophic error localized to the stream (siw's answer)
        assertEquals(TerminateCause.of(RdmapError.CATASTROPHIC_STREAM), e.terminateCause());
        assertEquals(2, tx.of(RdmapOpcode.RDMA_READ_RESPONSE).size(), "nothing answered beyond IRD");
    }

    @Test
    void anIrdSlotFreesOnceItsResponseLeft() {
        readRequest(0xA00, source.stag(), 16);
        readRequest(0xB00, source.stag(), 16);
        tx.sent(0);
        assertEquals(IRD - 1, responder.irdInUse(), "the first response left: its slot is free");
        readRequest(0xC00, source.stag(), 16); // within IRD again
        assertEquals(3, tx.of(RdmapOpcode.RDMA_READ_RESPONSE).size());
        assertEquals(0xC00, tx.of(RdmapOpcode.RDMA_READ_RESPONSE).get(2).stag());
    }

    @Test
    void aReadFromAnInvalidStagIsRefusedQuotingTheRequest() {
        RdmapException e = assertThrows(RdmapException.class, () -> readRequest(0xA00, source.stag() + 1, 16));
        // RFC 5040 §7.2: RDMAP Remote Protection Error, Invalid STag (the source is RDMAP's to check)
        assertEquals(TerminateCause.of(RdmapError.INVALID_STAG), e.terminateCause());
        assertEquals(0xA00, e.readRequest().sinkStag(), "the Terminate quotes the Read Request (RFC 5040 §4.8)");
        assertEquals(0, tx.messages.size(), "nothing sent");
    }

    @Test
    void aReadWithoutRemoteReadRightsIsRefused() {
        MemoryRegion local = side.register(side.buffer(16, 0), Access.LOCAL_WRITE);
        RdmapException e = assertThrows(RdmapException.class, () -> readRequest(0xA00, local.stag(), 16));
        // RFC 5040 §7.2: RDMAP Remote Protection Error, Access Rights Violation
        assertEquals(TerminateCause.of(RdmapError.ACCESS_RIGHTS_VIOLATION), e.terminateCause());
        assertEquals(0, tx.messages.size());
    }

    @Test
    void aWriteToAnInvalidStagIsRefusedBeforePlacement() { // RFC 5041 §7.2: DDP's Invalid STag
        MemoryRegion target = side.register(side.buffer(16, 0), Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        RdmapException e = assertThrows(RdmapException.class,
                () -> responder.writeTarget(target.stag() + 1, target.all().to(), true, 16));
        assertEquals(TerminateCause.of(DdpError.INVALID_STAG), e.terminateCause());
    }

    @Test
    void aWriteWithoutRemoteWriteRightsIsAnAccessRightsViolation() {
        MemoryRegion target = side.register(side.buffer(16, 0), Access.LOCAL_WRITE);
        RdmapException e = assertThrows(RdmapException.class,
                () -> responder.writeTarget(target.stag(), target.all().to(), true, 16));
        assertEquals(TerminateCause.of(RdmapError.ACCESS_RIGHTS_VIOLATION), e.terminateCause());
    }

    @Test
    void receivesPostedBeforeRtsAreHeldOnlyUntilRts() {
        EngineSide fresh = new EngineSide(LlpRole.RESPONDER);
        try {
            Responder r = new Responder(fresh.engine.stream(), tx, fresh.recvCq, fresh.engine.stream().table(),
                    fresh.pd);
            assertFalse(r.holdsEarlyReceiveQueue(), "no receive posted yet: no queue for them");
            MemoryRegion recv = fresh.register(fresh.buffer(64, 0), Access.LOCAL_WRITE);
            r.postRecv(RecvRequest.of(1, recv.slice(0, 32)));
            r.postRecv(RecvRequest.of(2, recv.slice(32, 32)));
            assertTrue(r.holdsEarlyReceiveQueue(), "posted before RTS: held");
            r.start(IRD, false);
            assertFalse(r.holdsEarlyReceiveQueue(), "RTS took them: an idle stream keeps no queue for them");
            assertEquals(2, r.postedReceives(), "both in effect, in order");
        } finally {
            fresh.close();
        }
    }
}
