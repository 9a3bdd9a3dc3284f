package dev.iwarp.ift;

import dev.iwarp.testkit.ApplicationEnd;
import dev.iwarp.testkit.ChannelOctets;
import dev.iwarp.testkit.fuzz.FuzzChecks;
import dev.iwarp.testkit.fuzz.TrackingAllocator;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.ByteArrayOutputStream;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;

/** What the IFT fuzz targets share: the typed errors, the application end. */
final class IftFuzzing {
    private IftFuzzing() {
    }

    static final List<Class<? extends Throwable>> TYPED = List.of(IftException.class, ClosedChannelException.class);

    /** The octets node A's codec sends for {@code ulpdus} (each must hold at least a DDP control octet). */
    static byte[] frame(IftParameters a, List<byte[]> ulpdus, TrackingAllocator alloc) {
        EmbeddedChannel tx = channel(alloc, new IftFramer(a));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<byte[]> accepted = new ArrayList<>();
        for (byte[] u : ulpdus) {
            try {
                tx.writeOutbound(alloc.heapBuffer(u.length).writeBytes(u));
                accepted.add(u);
            } catch (RuntimeException refused) {
                // a ULPDU the sender refuses (e.g. shorter than the DDP header it announces) is not sent
            }
            out.writeBytes(ChannelOctets.drainOutbound(tx));
        }
        ulpdus.clear();
        ulpdus.addAll(accepted);
        finish(tx);
        return out.toByteArray();
    }

    static EmbeddedChannel channel(TrackingAllocator alloc, ChannelHandler... handlers) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.freezeTime();
        ch.config().setAllocator(alloc);
        ch.pipeline().addLast(handlers);
        return ch;
    }

    static void finish(EmbeddedChannel ch) {
        FuzzChecks.finish(ch, TYPED);
    }

    /** The application end: keeps ULPDUs (copied, released), errors and the completion. */
    static final class App extends ApplicationEnd<IftAdaptionCompletionEvent> {
        App() {
            super(IftAdaptionCompletionEvent.class);
        }
    }
}
