package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.EmbeddedPairAccess;
import dev.iwarp.vitcp.VitcpCodec;
import dev.iwarp.vitcp.VitcpConfig;
import dev.iwarp.vitcp.VitcpConnection;
import dev.iwarp.vitcp.VitcpListenerTable;
import dev.iwarp.vitcp.VitcpPassiveHandler;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Two connected VIs (A active, B passive) over an in-memory TCP pair. */
final class ViPair implements AutoCloseable {
    static final byte[] CLIENT = "client".getBytes(StandardCharsets.US_ASCII);
    static final byte[] SERVER = "server".getBytes(StandardCharsets.US_ASCII);

    final ViProtectionDomain pdA = new ViProtectionDomain();
    final ViProtectionDomain pdB = new ViProtectionDomain();
    final ViCompletionQueue sendA = new ViCompletionQueue();
    final ViCompletionQueue recvA = new ViCompletionQueue();
    final ViCompletionQueue sendB = new ViCompletionQueue();
    final ViCompletionQueue recvB = new ViCompletionQueue();
    final ViEndpoint a;
    final ViEndpoint b;
    final EmbeddedPairAccess pair;
    private final List<ViMemoryRegion> regions = new ArrayList<>();

    ViPair(VitcpConfig configA, VitcpConfig configB) {
        a = new ViEndpoint(pdA, sendA, recvA, configA);
        b = new ViEndpoint(pdB, sendB, recvB, configB);
        VitcpListenerTable table = new VitcpListenerTable();
        table.register(SERVER, configB, false, b::accept);
        pair = new EmbeddedPairAccess(
                new ChannelHandler[] {new VitcpCodec(configA.crcMode()), a.newActiveHandler(CLIENT, SERVER, false)},
                new ChannelHandler[] {new VitcpCodec(configB.crcMode()), new VitcpPassiveHandler(table, configB)});
    }

    VitcpConnection connect() {
        pair.pump();
        if (!a.isConnected() || !b.isConnected()) {
            throw new AssertionError("not connected");
        }
        return a.connection();
    }

    ViMemoryRegion region(ViProtectionDomain pd, int size, ViAccess... access) {
        ByteBuf buf = Unpooled.buffer(size, size);
        buf.writerIndex(size);
        ViMemoryRegion r = pd.register(buf, access);
        buf.release(); // the region holds its own reference
        regions.add(r);
        return r;
    }

    static byte[] pattern(int n, int seed) {
        byte[] d = new byte[n];
        new java.util.Random(seed).nextBytes(d);
        return d;
    }

    static void fill(ViMemoryRegion r, byte[] data) {
        r.buffer().setBytes(0, data);
    }

    static byte[] read(ViMemoryRegion r, int n) {
        byte[] d = new byte[n];
        r.buffer().getBytes(0, d);
        return d;
    }

    @Override
    public void close() {
        pair.close();
        for (ViMemoryRegion r : regions) {
            r.deregister();
        }
    }
}
