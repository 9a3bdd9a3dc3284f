package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpError;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.rdmap.RdmapError;
import dev.iwarp.rdmap.RdmapException;
import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcOpcode;
import dev.iwarp.verbs.WcStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The requester alone against a {@link FakeTransmitter}: ORD (RFC 5040 §5.2), Read Responses matched to the
 * oldest outstanding Read and checked before placement (RFC 5040 §4.5, RFC 5041 §7.2), completions in
 * submission order. The stream under it is an {@link EngineSide} in RTS.
 */
class RequesterTest {
    private static final int ORD = 2;
    private EngineSide side;
    private FakeTransmitter tx;
    private Requester requester;
    private MemoryRegion sink;
    private int flushes;

    @BeforeEach
    void setUp() {
        side = new EngineSide(LlpRole.INITIATOR);
        side.establish(side.parameters().ord(ORD).build());
        tx = new FakeTransmitter(() -> flushes++);
        requester = new Requester(side.engine.stream(), tx, side.sendCq, side.engine.stream().table(), side.pd);
        requester.start(ORD, null);
        sink = side.register(side.buffer(64, 0), Access.LOCAL_WRITE);
    }

    @AfterEach
    void tearDown() {
        side.close();
    }

    private void postRead(long wrId, int offset) {
        requester.postSend(SendRequest.rdmaRead(wrId, sink.slice(offset, 16), 0x1234, 0x100 * wrId));
    }

    /** The whole Read Response to the oldest outstanding Read, placed. */
    private void respond(int offset) {
        assertNotNull(requester.readResponseTarget(sink.stag(), sink.slice(offset, 16).to(), true, 16));
        requester.readResponsePlaced(true, 16);
    }

    @Test
    void noMoreReadsOutstandingThanOrd() {
        postRead(1, 0);
        postRead(2, 16);
        postRead(3, 32);
        assertEquals(ORD, tx.of(RdmapOpcode.RDMA_READ_REQUEST).size(), "the third Read waits for an ORD credit");
        assertEquals(ORD, requester.ordInUse());
        respond(0);
        assertEquals(3, tx.of(RdmapOpcode.RDMA_READ_REQUEST).size(), "a response frees the credit");
        assertEquals(ORD, requester.ordInUse());
    }

    @Test
    void aRequestPostedBehindOneThatWaitsForOrdWaitsWithIt() {
        postRead(1, 0);
        postRead(2, 16);
        postRead(3, 32); // waits for an ORD credit
        requester.postSend(SendRequest.rdmaWrite(4, sink.slice(48, 16), 0x1234, 0x400));
        requester.postSend(SendRequest.send(5, sink.slice(48, 16)));
        assertEquals(2, tx.messages.size(), "nothing passes the Read that waits (RFC 5040 §5.5: requests start in order)");
        respond(0);
        assertEquals(List.of(RdmapOpcode.RDMA_READ_REQUEST, RdmapOpcode.RDMA_READ_REQUEST,
                RdmapOpcode.RDMA_READ_REQUEST, RdmapOpcode.RDMA_WRITE, RdmapOpcode.SEND),
                tx.messages.stream().map(FakeTransmitter.Message::opcode).toList());
        requester.postSend(SendRequest.send(6, sink.slice(48, 16)));
        assertEquals(6, tx.messages.size(), "with nothing waiting, a post starts at once");
    }

    @Test
    void readsCompleteInSubmissionOrderWithTheirResponses() {
        postRead(1, 0);
        postRead(2, 16);
        assertNull(side.sendCq.poll(), "nothing completes before its response");
        respond(0);
        Completion c = side.sendCq.poll();
        assertEquals(1, c.wrId());
        assertTrue(c.isSuccess());
        assertEquals(WcOpcode.RDMA_READ, c.opcode());
        respond(16);
        assertEquals(2, side.sendCq.poll().wrId());
        assertEquals(0, requester.ordInUse());
    }

    @Test
    void aReadResponseWithoutAnOutstandingReadIsAnUnexpectedOpcode() {
        RdmapException e = assertThrows(RdmapException.class,
                () -> requester.readResponseTarget(sink.stag(), sink.all().to(), true, 16));
        // RFC 5040 §7.2: RDMAP Remote Operation Error, Unexpected OpCode
        assertEquals(TerminateCause.of(RdmapError.UNEXPECTED_OPCODE), e.terminateCause());
    }

    @Test
    void aReadResponseToAnotherStagIsAnInvalidStagBeforeAnyOctetIsPlaced() {
        postRead(1, 0);
        RdmapException e = assertThrows(RdmapException.class,
                () -> requester.readResponseTarget(sink.stag() + 1, sink.all().to(), true, 16));
        // RFC 5041 §7.2: DDP tagged buffer error, Invalid STag
        assertEquals(TerminateCause.of(DdpError.INVALID_STAG), e.terminateCause());
        assertEquals(1, requester.ordInUse(), "the Read is still outstanding");
    }

    @Test
    void aReadResponseOutsideTheReadIsABoundsViolation() {
        postRead(1, 0);
        RdmapException e = assertThrows(RdmapException.class,
                () -> requester.readResponseTarget(sink.stag(), sink.all().to() + 8, true, 16));
        assertEquals(TerminateCause.of(DdpError.BASE_OR_BOUNDS_VIOLATION), e.terminateCause());
    }

    @Test
    void aReadIntoARegionWithoutLocalWriteFailsLocallyAndSendsNothing() {
        MemoryRegion readOnly = side.register(side.buffer(16, 0), Access.REMOTE_READ);
        requester.postSend(SendRequest.rdmaRead(9, readOnly.all(), 0x1234, 0));
        assertEquals(0, tx.of(RdmapOpcode.RDMA_READ_REQUEST).size());
        Completion c = side.sendCq.poll();
        assertEquals(9, c.wrId());
        assertEquals(WcStatus.LOC_PROT_ERR, c.status());
    }
}
