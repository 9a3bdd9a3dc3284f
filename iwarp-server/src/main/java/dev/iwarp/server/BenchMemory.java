package dev.iwarp.server;

import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

/**
 * The local memory of one {@link BenchConnection}: the source and sink slots, registered, and the bench hello's
 * buffer; with {@code --verify}, the pattern written into a source slot and checked in a sink slot
 * ({@link BenchPattern}). Without verify every source slot holds the same message.
 */
final class BenchMemory {
    /** Most octets of local buffers per connection for slots (verify, Sends): bounds depth x size. */
    static final long MAX_BUFFER = 64L << 20;

    private final BenchSettings s;
    private final int index;
    private final WireDomain domain;
    private final ByteBuf srcMemory;
    private final ByteBuf sinkMemory;
    final WireRegion src;
    final WireRegion sink;
    /** One message of scratch for --verify's pattern (built and checked in bulk), else null. */
    private final byte[] verifyScratch;
    private ByteBuf helloMemory;
    private WireRegion hello;

    /** Connection {@code index}'s slots for {@code s}, registered in {@code domain}. */
    BenchMemory(BenchSettings s, int index, WireDomain domain) {
        this.s = s;
        this.index = index;
        this.domain = domain;
        int slotsWanted = s.verify() || s.op() == Bench.Op.send
                ? (int) Math.max(1, Math.min(s.depth(), MAX_BUFFER / s.size())) : 1;
        srcMemory = PooledByteBufAllocator.DEFAULT.directBuffer(s.size() * slotsWanted);
        sinkMemory = PooledByteBufAllocator.DEFAULT.directBuffer(s.size() * slotsWanted);
        sinkMemory.setZero(0, sinkMemory.capacity());
        byte[] message = new byte[s.size()]; // without verify: the same message every time
        for (int i = 0; i < message.length; i++) {
            message[i] = (byte) (i * 31 + 7);
        }
        for (int slot = 0; slot < slotsWanted; slot++) {
            srcMemory.setBytes(slot * s.size(), message); // in bulk: see BenchPattern.fill
        }
        verifyScratch = s.verify() ? message : null;
        src = domain.register(srcMemory, WireAccess.LOCAL_WRITE);
        sink = domain.register(sinkMemory, WireAccess.LOCAL_WRITE);
    }

    /** The bench hello's buffer (request, then answer), made at the first call; its memory for writing the request. */
    WireRegion hello() {
        if (hello == null) {
            helloMemory = PooledByteBufAllocator.DEFAULT.directBuffer(2 * BenchHello.LENGTH);
            hello = domain.register(helloMemory, WireAccess.LOCAL_WRITE);
        }
        return hello;
    }

    ByteBuf helloMemory() {
        return helloMemory;
    }

    /** --verify: iteration {@code it}'s pattern into the source slot at {@code local}. */
    void writePattern(int local, long it) {
        BenchPattern.fill(srcMemory, local, s.size(), index, it, verifyScratch);
        if (index == 0 && it == s.corruptIteration()) { // test hook: what goes on the wire is not the pattern
            srcMemory.setByte(local + s.size() / 2, ~srcMemory.getByte(local + s.size() / 2));
        }
    }

    /** --verify: null if the sink slot at {@code local} holds iteration {@code it}'s pattern, else what differs. */
    String mismatch(int local, long it) {
        int bad = BenchPattern.firstMismatch(sinkMemory, local, s.size(), index, it, verifyScratch);
        return bad < 0 ? null : String.format("verify failed: connection %d, iteration %d: octet %d of %d is 0x%02x,"
                + " expected 0x%02x", index, it, bad, s.size(), sinkMemory.getByte(local + bad) & 0xff,
                BenchPattern.octet(index, it, bad) & 0xff);
    }

    /** Deregisters and frees everything; once the connection closed. */
    void release() {
        src.deregister();
        sink.deregister();
        srcMemory.release();
        sinkMemory.release();
        if (hello != null) {
            hello.deregister();
            helloMemory.release();
        }
    }
}
