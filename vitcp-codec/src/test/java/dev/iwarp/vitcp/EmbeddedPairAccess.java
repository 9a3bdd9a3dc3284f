package dev.iwarp.vitcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;

import java.util.List;
import java.util.function.UnaryOperator;

/** {@link EmbeddedPair} for tests in other packages. */
public final class EmbeddedPairAccess implements AutoCloseable {
    private final EmbeddedPair pair;

    public EmbeddedPairAccess(ChannelHandler[] a, ChannelHandler[] b) {
        pair = new EmbeddedPair(a, b);
    }

    public int pump() {
        return pair.pump();
    }

    public EmbeddedChannel a() {
        return pair.a;
    }

    public EmbeddedChannel b() {
        return pair.b;
    }

    public void record(boolean on) {
        pair.record = on;
    }

    public List<String> aToB() {
        return pair.aToB;
    }

    public List<String> bToA() {
        return pair.bToA;
    }

    public void aToBFilter(UnaryOperator<ByteBuf> f) {
        pair.aToBFilter = f;
    }

    /** What one end writes reaches the other in reads of at most {@code octets} (0: as written). */
    public void chunk(int octets) {
        pair.chunk = octets;
    }

    public void bToAFilter(UnaryOperator<ByteBuf> f) {
        pair.bToAFilter = f;
    }

    @Override
    public void close() {
        pair.close();
    }
}
