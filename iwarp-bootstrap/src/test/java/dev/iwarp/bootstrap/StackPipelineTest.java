package dev.iwarp.bootstrap;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ift.IftSettings;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.rdmap.engine.RdmaEngine;
import dev.iwarp.testkit.TestResources;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelPipeline;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The handlers an established connection of the stack holds, on both ends: the framer, the adapter to DDP's
 * lower-layer contract and the RDMAP engine, and no DDP codec (the engine receives and writes through the
 * contract; an idle connection pays for every handler it keeps).
 */
class StackPipelineTest {
    @RegisterExtension
    final TestResources resources = new TestResources();

    private IwarpStack stack() {
        return resources.closeAfter(IwarpStack.builder().transport(Transport.NIO).threads(1).build());
    }

    @ParameterizedTest
    @ValueSource(strings = {"MPA", "IFT"})
    void anEstablishedConnectionHoldsTheFramerTheAdapterAndTheEngineOnly(String name) throws Exception {
        Framing framing = name.equals("IFT") ? IftFraming.of(IftSettings.builder().build())
                : MpaFraming.of(MpaSettings.defaults());
        IwarpStack serverStack = stack();
        IwarpStack clientStack = stack();
        ProtectionDomain spd = serverStack.allocPd();
        CompletionQueue serverRecv = new CompletionQueue();
        MemoryRegion recv = spd.register(buffer(64), Access.LOCAL_WRITE);
        CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
        Channel listener = serverStack.listen(new InetSocketAddress("127.0.0.1", 0), framing, req -> {
            QueuePair qp = req.accept(spd, new CompletionQueue(), serverRecv, new byte[0]);
            qp.postRecv(RecvRequest.of(7, recv.all()));
            accepted.complete(qp);
        });
        resources.closeAfter(() -> listener.close().sync());
        ProtectionDomain cpd = clientStack.allocPd();
        QueuePair client = clientStack.connect(listener.localAddress(), ConnectOptions.of(cpd).framing(framing))
                .get(10, TimeUnit.SECONDS);
        QueuePair server = accepted.get(10, TimeUnit.SECONDS);
        server.established().get(10, TimeUnit.SECONDS);

        for (QueuePair qp : List.of(client, server)) {
            Channel ch = qp.channel();
            ChannelPipeline p = ch.pipeline();
            List<String> names = ch.eventLoop().submit(p::names).get(10, TimeUnit.SECONDS);
            assertNull(p.get(DdpCodec.class), names::toString);
            assertNotNull(p.get(RdmaEngine.class), names::toString);
            assertEquals(4, names.size(), "framer, llp, rdmap and Netty's tail: " + names);
            assertEquals(List.of(IwarpPipeline.LLP, IwarpPipeline.RDMAP), names.subList(1, 3), names::toString);
        }
        // the engine without the codec: a Send arrives
        MemoryRegion src = cpd.register(buffer(64).setByte(31, 0x5A), Access.LOCAL_WRITE);
        client.postSend(SendRequest.send(1, src.slice(0, 32)));
        Completion c = serverRecv.take(10, TimeUnit.SECONDS);
        assertNotNull(c, "the Send's receive completion");
        assertTrue(c.isSuccess(), c::toString);
        assertEquals(32, c.byteLength());
        assertEquals(0x5A, recv.memory().getByte(31));
    }

    private ByteBuf buffer(int size) {
        ByteBuf b = Unpooled.directBuffer(size, size).writeZero(size);
        resources.releaseAfter(b);
        return b;
    }
}
