package dev.iwarp.rdmap.engine;

import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.RdmaDevice;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.internal.VerbsAccess;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static dev.iwarp.rdmap.engine.RdmaEngineErrorsTest.terminateSentBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Memory protection as on an RNIC (RFC 5040 §5.3, RFC 5042) on one device shared by many streams,
 * each in a PD of its own: a peer may invalidate only STags of its own PD registered with
 * {@link Access#REMOTE_INVALIDATE}, and probing other STags tells it nothing: every guess, live in
 * another PD or not, gets the same Terminate.
 */
class StagProtectionTest {
    private final RdmaDevice device = new RdmaDevice();
    private final List<EnginePair> pairs = new ArrayList<>();
    private final List<ByteBuf> memory = new ArrayList<>();

    @AfterEach
    void close() {
        pairs.forEach(EnginePair::close);
        device.close();
        memory.forEach(ByteBuf::release);
    }

    private EnginePair stream() {
        EnginePair p = new EnginePair(device);
        pairs.add(p);
        return p;
    }

    /** A region of the victim's PD, with every right a careless application could give it. */
    private MemoryRegion victimRegion(ProtectionDomain victim, int fill) {
        ByteBuf b = Unpooled.directBuffer(64, 64);
        memory.add(b);
        for (int i = 0; i < 64; i++) {
            b.writeByte(fill);
        }
        return victim.register(b, Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE,
                Access.REMOTE_INVALIDATE);
    }

    /** Sends a Send with Invalidate of {@code stag} on a fresh stream; returns the Terminate (if any). */
    private TerminateMessage sendWithInvalidate(EnginePair p, int stag) {
        MemoryRegion src = p.initiator.register(p.initiator.buffer(16, 1), Access.LOCAL_WRITE);
        MemoryRegion recv = p.responder.register(p.responder.buffer(16, 0), Access.LOCAL_WRITE);
        p.responder.qp.postRecv(RecvRequest.of(1, recv.all()));
        p.initiator.qp.postSend(SendRequest.sendWithInvalidate(1, src.all(), stag));
        p.pump();
        EngineSide.Recorded last = p.responder.lastWritten();
        return last != null && last.opcode() == 7 ? terminateSentBy(p.responder) : null;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"own PD, not opted in", "opted in, other PD", "unknown"})
    void sendWithInvalidateIsRefusedUnlessOptedInAndOfTheSamePd(String what) {
        EnginePair p = stream();
        ProtectionDomain other = device.allocPd();
        MemoryRegion target;
        int stag;
        switch (what) {
            case "own PD, not opted in":
                target = p.responder.register(p.responder.buffer(64, 0), Access.REMOTE_WRITE, Access.REMOTE_READ);
                stag = target.stag();
                break;
            case "opted in, other PD":
                target = victimRegion(other, 0x11);
                stag = target.stag();
                break;
            default:
                target = victimRegion(other, 0x11);
                stag = target.stag() ^ 0x80;
        }
        TerminateMessage t = sendWithInvalidate(p, stag);
        assertEquals(new TerminateCause(0, 2, 0x09), t == null ? null : t.cause(),
                "RFC 5040 §7: Remote Operation / STag cannot be invalidated, whatever the reason");
        assertTrue(target.isValid(), "the region stays valid");
        assertFalse(p.responder.ch.isOpen(), "the attacker's stream is closed");
        assertTrue(t.m() && t.d() && !t.r());
        for (int i = 0; i < 64; i++) {
            assertEquals(what.startsWith("own") ? 0 : 0x11, target.memory().getByte(i), "region untouched");
        }
    }

    @Test
    void optedInRegionOfTheSamePdIsInvalidatedOnce() {
        EnginePair p = stream();
        MemoryRegion target = victimRegion(p.responder.pd, 0);
        assertEquals(null, sendWithInvalidate(p, target.stag()));
        assertFalse(target.isValid());
        Completion c = RdmaEngineOperationsTest.next(p.responder.recvCq);
        assertTrue(c.hasInvalidatedStag());
        assertEquals(target.stag(), c.invalidatedStag());
    }

    /**
     * A peer sweeps 256 STags: half are live STags of other streams' PDs on the same device (with
     * every right, and the right TO), half are not registered at all. Each guess is tried with an RDMA
     * Write, an RDMA Read and a Send with Invalidate, each on a fresh stream; the answers must all be
     * the same per operation, so the sweep finds nothing; and nothing of the victims changed.
     */
    @Test
    void stagSweepTellsLiveForeignStagsFromUnknownOnesByNothing() {
        Random random = new SecureRandom();
        List<MemoryRegion> victims = new ArrayList<>();
        for (int i = 0; i < 128; i++) {
            victims.add(victimRegion(device.allocPd(), 0x33));
        }
        Map<String, Integer> writeAnswers = new TreeMap<>();
        Map<String, Integer> readAnswers = new TreeMap<>();
        Map<String, Integer> invalidateAnswers = new TreeMap<>();
        for (int g = 0; g < 256; g++) {
            MemoryRegion live = victims.get(g / 2);
            int stag;
            long to = live.iova();
            if (g % 2 == 0) {
                stag = live.stag();
            } else {
                do {
                    stag = random.nextInt();
                } while (VerbsAccess.get().taggedBufferTable(device).lookup(stag) != null || stag >>> 8 == 0);
            }
            EnginePair w = stream();
            MemoryRegion src = w.initiator.register(w.initiator.buffer(8, 0x77), Access.LOCAL_WRITE);
            w.initiator.qp.postSend(SendRequest.rdmaWrite(1, src.all(), stag, to));
            w.pump();
            count(writeAnswers, terminateSentBy(w.responder));

            EnginePair r = stream();
            MemoryRegion sink = r.initiator.register(r.initiator.buffer(8, 0), Access.LOCAL_WRITE);
            r.initiator.qp.postSend(SendRequest.rdmaRead(1, sink.all(), stag, to));
            r.pump();
            count(readAnswers, terminateSentBy(r.responder));
            assertEquals(0, sink.memory().getByte(0), "nothing read");

            count(invalidateAnswers, sendWithInvalidate(stream(), stag));
            pairs.forEach(EnginePair::close);
            pairs.clear();
        }
        assertEquals(Map.of("1/1/0x00 M D", 256), writeAnswers, "RDMA Write: DDP Invalid STag every time");
        assertEquals(Map.of("0/1/0x00 M D R", 256), readAnswers, "RDMA Read: RDMAP Invalid STag every time");
        assertEquals(Map.of("0/2/0x09 M D", 256), invalidateAnswers, "Send with Invalidate: refused every time");
        for (MemoryRegion v : victims) {
            assertTrue(v.isValid(), v::toString);
            for (int i = 0; i < 64; i++) {
                assertEquals(0x33, v.memory().getByte(i) & 0xFF, "victim octet " + i);
            }
        }
    }

    private static void count(Map<String, Integer> answers, TerminateMessage t) {
        if (t == null) {
            answers.merge("accepted", 1, Integer::sum);
            return;
        }
        TerminateCause c = t.cause();
        String answer = String.format("%d/%d/0x%02x%s%s%s", c.layer(), c.errorType(), c.errorCode(),
                t.m() ? " M" : "", t.d() ? " D" : "", t.r() ? " R" : "");
        answers.merge(answer, 1, Integer::sum);
    }
}
