package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.ViSegmentType;
import dev.iwarp.vitcp.VitcpConfig;
import dev.iwarp.vitcp.VitcpCrcMode;
import dev.iwarp.vitcp.VitcpSegmentEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.nio.NioIoHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static dev.iwarp.vitcp.vi.ViPair.CLIENT;
import static dev.iwarp.vitcp.vi.ViPair.SERVER;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A provider closed while its VIs still hold registered memory: a payload being read into a posted receive, Sends
 * queued towards a peer that stopped reading, RDMA Read Responses queued likewise. Once the provider is closed and
 * the regions deregistered, nothing may hold a region's memory any more (its reference count is 0): the
 * connections' handlers released what they held when the provider closed them.
 */
class ViProviderCloseTest {
    /** The liveness bound of every wait: a condition that takes longer is a failure, whatever the machine's load. */
    private static final long WAIT_SECONDS = 60;
    private static final int MTU = 8192;

    private final List<AutoCloseable> open = new ArrayList<>();
    private final List<ViMemoryRegion> regions = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        regions.forEach(ViMemoryRegion::deregister);
    }

    private <T extends AutoCloseable> T closeAfter(T c) {
        open.add(c);
        return c;
    }

    private ViMemoryRegion region(ViProtectionDomain pd, int size, ViAccess... access) {
        ByteBuf buf = Unpooled.directBuffer(size, size);
        buf.writerIndex(size);
        ViMemoryRegion r = pd.register(buf, access);
        buf.release(); // the region holds its own reference
        regions.add(r);
        return r;
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within " + WAIT_SECONDS + " s: " + what);
            }
            Thread.sleep(1);
        }
    }

    /** A and B connected: B through {@code server}'s listener, A through {@code client}. */
    private record Vis(ViEndpoint a, ViEndpoint b) {
    }

    private Vis connect(ViProvider server, ViProvider client, VitcpConfig cfg, ViProtectionDomain pdA,
                        ViProtectionDomain pdB) throws Exception {
        ViListener listener = server.listen(new InetSocketAddress("127.0.0.1", 0), cfg); // the provider's close closes it
        ViEndpoint b = new ViEndpoint(pdB, new ViCompletionQueue(), new ViCompletionQueue(), cfg);
        listener.register(SERVER, cfg, b::accept);
        ViEndpoint a = new ViEndpoint(pdA, new ViCompletionQueue(), new ViCompletionQueue(), cfg);
        client.connect(a, listener.localAddress(), CLIENT, SERVER).get(WAIT_SECONDS, TimeUnit.SECONDS);
        await(() -> b.channel() != null, "B connected"); // B's side is up once its accept ran on its loop
        return new Vis(a, b);
    }

    /** The first {@code octets} octets of a Send segment of a whole MTU of payload, as the peer's wire carries it. */
    private static ByteBuf partialSend(int messageNumber, int octets) {
        EmbeddedChannel enc = new EmbeddedChannel(new VitcpSegmentEncoder(VitcpCrcMode.ETHERNET_REFLECTED));
        enc.writeOutbound(ViSegment.builder(ViSegmentType.SEND).messageNumber(messageNumber).endOfMessage(true)
                .build(Unpooled.wrappedBuffer(new byte[MTU])));
        ByteBuf wire = enc.readOutbound();
        enc.finishAndReleaseAll();
        try {
            return Unpooled.copiedBuffer(wire.slice(wire.readerIndex(), octets));
        } finally {
            wire.release();
        }
    }

    /**
     * The provider's VI is reading a Send's payload straight into the posted receive (the segment's headers and part
     * of its payload are in, the rest is due) when the provider closes.
     */
    @Test
    void providerClosedWhileAPayloadIsReadIntoPlaceReleasesTheRegion() throws Exception {
        ViProvider server = closeAfter(new ViProvider());
        VitcpConfig cfg = VitcpConfig.builder().mtu(MTU).build();
        ViProvider client = closeAfter(new ViProvider());
        ViProtectionDomain pdB = new ViProtectionDomain();
        Vis vis = connect(server, client, cfg, new ViProtectionDomain(), pdB);
        ViMemoryRegion recv = region(pdB, 4 * MTU);
        vis.b().postRecv(ViRecvRequest.of(1, recv.all()));
        // the peer's Send: its headers and 1000 of its 8192 payload octets, the rest never comes
        vis.a().channel().writeAndFlush(partialSend(1, ViSegment.HEADER_LENGTH + 1000));
        // the decoder holds the posted receive's memory for the payload's remaining octets
        await(() -> recv.buffer().refCnt() > 1, "the payload's destination taken");
        server.close();
        recv.deregister();
        assertEquals(0, recv.buffer().refCnt(), "region memory still held after the provider closed");
    }

    /**
     * Sends gathered from a region (slices of it, no copy) and queued towards a peer that stopped reading when the
     * provider closes: over event loops it made, or over the caller's, which the caller shuts down afterwards.
     */
    @ParameterizedTest(name = "caller''s loops: {0}")
    @ValueSource(booleans = {false, true})
    void providerClosedWithSendsQueuedTowardsAStalledPeerReleasesTheRegion(boolean callersLoops) throws Exception {
        VitcpConfig cfg = VitcpConfig.builder().mtu(MTU).build();
        ViProvider server = closeAfter(new ViProvider());
        EventLoopGroup group = callersLoops ? new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory()) : null;
        if (group != null) {
            closeAfter(() -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly());
        }
        ViProvider client = closeAfter(group != null ? new ViProvider(group) : new ViProvider());
        ViProtectionDomain pdA = new ViProtectionDomain();
        Vis vis = connect(server, client, cfg, pdA, new ViProtectionDomain());
        Channel chB = vis.b().channel();
        chB.eventLoop().submit(() -> chB.config().setAutoRead(false)).get(WAIT_SECONDS, TimeUnit.SECONDS);
        ViMemoryRegion src = region(pdA, 1 << 20);
        // more than the sockets' buffers take: the rest stays in A's outbound buffer, slices of src
        for (int i = 0; i < 32; i++) {
            vis.a().postSend(ViSendRequest.send(i, src.all()));
        }
        Channel chA = vis.a().channel();
        await(() -> !chA.isWritable(), "A's Sends queued beyond the high-water mark");
        client.close();
        if (group != null) { // as an application that owns the loops does next
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
        src.deregister();
        assertEquals(0, src.buffer().refCnt(), "region memory still held after the provider closed");
    }

    /** RDMA Read Responses from a region queued towards a peer that stopped reading when the provider closes. */
    @Test
    void providerClosedWithReadResponsesQueuedTowardsAStalledPeerReleasesTheRegion() throws Exception {
        VitcpConfig cfg = VitcpConfig.builder().mtu(MTU).rdmaReadWindow(16).build();
        ViProvider server = closeAfter(new ViProvider());
        ViProvider client = closeAfter(new ViProvider());
        ViProtectionDomain pdA = new ViProtectionDomain();
        ViProtectionDomain pdB = new ViProtectionDomain();
        Vis vis = connect(server, client, cfg, pdA, pdB);
        // 16 responses of 2 MiB, more than the sockets' buffers take: the rest stays in B's outbound buffer
        ViMemoryRegion source = region(pdB, 2 << 20, ViAccess.RDMA_READ);
        ViMemoryRegion sink = region(pdA, 2 << 20);
        Channel chA = vis.a().channel();
        chA.eventLoop().submit(() -> chA.config().setAutoRead(false)).get(WAIT_SECONDS, TimeUnit.SECONDS);
        for (int i = 0; i < cfg.rdmaReadWindow(); i++) {
            vis.a().postSend(ViSendRequest.rdmaRead(i, source.address(), source.handle(), sink.all()));
        }
        Channel chB = vis.b().channel();
        await(() -> !chB.isWritable(), "B's Read Responses queued beyond the high-water mark");
        server.close();
        source.deregister();
        assertEquals(0, source.buffer().refCnt(), "region memory still held after the provider closed");
    }
}
