package dev.iwarp.server.perftest;

import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.lang.invoke.VarHandle;

/**
 * The registered memory of one run. The data region has two halves of {@code half} octets each: the first is what
 * we advertise (the peer Writes into it, Reads from it, our receives land in it), the second is our own source and
 * sink. {@code half} is max(largest message, cycle buffer), which covers perftest's remote-address walk. The credit
 * region (send tests) holds one 4-octet little-endian word per QP, the word the peer RDMA-Writes its receive count
 * to, then the slots our own credit Writes are sent from.
 */
final class Buffers {
    static final int CREDIT_SLOTS = 64;

    final int half;
    final ByteBuf data;
    final WireRegion dataRegion;
    final ByteBuf credit;
    final WireRegion creditRegion;

    final int qps;

    Buffers(WireDomain domain, int half, int qps) {
        this.half = half;
        this.qps = qps;
        data = Unpooled.directBuffer(2 * half, 2 * half);
        data.writeZero(2 * half);
        dataRegion = domain.register(data, WireAccess.LOCAL_WRITE, WireAccess.REMOTE_WRITE, WireAccess.REMOTE_READ);
        credit = Unpooled.directBuffer(4 * qps + 4 * CREDIT_SLOTS, 4 * qps + 4 * CREDIT_SLOTS);
        credit.writeZero(credit.capacity());
        creditRegion = domain.register(credit, WireAccess.LOCAL_WRITE, WireAccess.REMOTE_WRITE);
    }

    /** The peer's receive count as it last RDMA-Wrote it (little-endian, as perftest writes it). */
    int creditWord(int qp) {
        VarHandle.acquireFence();
        return credit.getIntLE(4 * qp);
    }

    /** The offset of QP {@code qp}'s credit word (what our dests advertise in send tests). */
    static int creditWordOffset(int qp) {
        return 4 * qp;
    }

    /** The octet at {@code offset} of the advertised half, read fresh (the peer's RDMA Writes land there). */
    byte advertisedOctet(int offset) {
        VarHandle.acquireFence();
        return data.getByte(offset);
    }

    /** Offset of credit slot {@code i} (our credit Writes' source). */
    int creditSlot(long i, int value) {
        int at = 4 * qps + 4 * (int) (i % CREDIT_SLOTS);
        credit.setIntLE(at, value);
        return at;
    }

    void release() {
        dataRegion.deregister();
        creditRegion.deregister();
        data.release();
        credit.release();
    }
}
