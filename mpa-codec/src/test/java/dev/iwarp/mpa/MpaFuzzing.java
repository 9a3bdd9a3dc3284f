package dev.iwarp.mpa;

import dev.iwarp.testkit.ApplicationEnd;
import dev.iwarp.testkit.ChannelOctets;
import dev.iwarp.testkit.fuzz.FuzzChecks;
import dev.iwarp.testkit.fuzz.TrackingAllocator;
import io.netty.channel.embedded.EmbeddedChannel;

import java.nio.channels.ClosedChannelException;
import java.util.List;

/** What the MPA fuzz targets share: the typed errors, the application end. */
final class MpaFuzzing {
    private MpaFuzzing() {
    }

    static final List<Class<? extends Throwable>> TYPED =
            List.of(MpaException.class, MpaRejectedException.class, ClosedChannelException.class);

    /** The octets a framer with these settings sends for {@code ulpdus}. */
    static byte[] frame(List<byte[]> ulpdus, boolean crc, boolean markers, TrackingAllocator alloc) {
        EmbeddedChannel tx = new EmbeddedChannel();
        tx.config().setAllocator(alloc);
        tx.pipeline().addLast(new MpaFramer(crc, markers, false, 0xFFFF, 1024, false));
        for (byte[] u : ulpdus) {
            tx.writeOutbound(alloc.heapBuffer(u.length).writeBytes(u));
        }
        byte[] octets = ChannelOctets.drainOutbound(tx);
        tx.finishAndReleaseAll();
        return octets;
    }

    /** Closes and releases everything; a write the handler failed at the close is typed too. */
    static void finish(EmbeddedChannel ch) {
        FuzzChecks.finish(ch, TYPED);
    }

    /** The application: accepts or rejects the Request, keeps ULPDUs (copied, released) and errors. */
    static final class App extends ApplicationEnd<MpaStartupCompletionEvent> {
        final boolean reject;

        App(boolean reject) {
            super(MpaStartupCompletionEvent.class);
            this.reject = reject;
        }

        @Override
        protected void otherEvent(Object evt) {
            if (evt instanceof MpaConnectRequest) {
                MpaConnectRequest r = (MpaConnectRequest) evt;
                if (reject) {
                    r.reject(new byte[] {9});
                } else {
                    r.accept(new byte[] {7, 7});
                }
            }
        }
    }
}
