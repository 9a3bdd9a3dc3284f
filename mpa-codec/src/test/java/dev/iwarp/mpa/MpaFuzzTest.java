package dev.iwarp.mpa;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.iwarp.testkit.fuzz.FuzzChecks;
import dev.iwarp.testkit.fuzz.FuzzInput;
import dev.iwarp.testkit.fuzz.TrackingAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.io.ByteArrayOutputStream;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Fuzz targets for MPA (Jazzer). {@code mvn verify} replays the stored corpus
 * ({@code src/test/resources/dev/iwarp/mpa/MpaFuzzTestInputs/<target>/}); {@code JAZZER_FUZZ=1}
 * fuzzes (see {@code .ci/fuzz}). Each input must end in no exception other than the MPA errors, no
 * buffer left referenced, and, for streams we framed ourselves and did not corrupt, every ULPDU back
 * as sent.
 */
class MpaFuzzTest {
    static final List<Class<? extends Throwable>> TYPED =
            List.of(MpaException.class, MpaRejectedException.class, ClosedChannelException.class);

    @BeforeAll
    static void quiet() {
        FuzzChecks.captureLogs();
    }

    @AfterAll
    static void loud() {
        FuzzChecks.restoreLogs();
    }

    /**
     * The startup handler in either role (RFC 5044 §7.1, RFC 6581, Rev 0/1/2) fed a peer's octets: the
     * Request (Responder) or Reply (Initiator), then whatever follows goes to the negotiated framer.
     * Octet 0: bit 0 Initiator, 1 CRC, 2 markers, 3 peer-to-peer, 4 reject, 5-6 revision (0 = 2),
     * 7 minimum revision 0 (else 1). Octet 1: TCP split seed. Octet 2: Private Data limit / 2.
     * Then the stream.
     */
    @FuzzTest
    void startup(byte[] data) {
        FuzzInput in = new FuzzInput(data);
        int cfg = in.u8();
        int splitSeed = in.u8();
        int pdLimit = Math.min(512, in.u8() * 2 + 2);
        boolean initiator = (cfg & 1) != 0;
        int revision = (cfg >>> 5) & 3;
        revision = revision == 0 || revision == 3 ? 2 : revision - 1;
        MpaSettings settings = MpaSettings.builder().revision(revision).minRevision((cfg & 0x80) != 0 ? 0 : Math.min(1, revision))
                .crc((cfg & 2) != 0).markers((cfg & 4) != 0).peerToPeer(revision == 2 && (cfg & 8) != 0)
                .privateDataLimit(pdLimit).privateData(new byte[] {1, 2, 3}).build();
        boolean reject = (cfg & 0x10) != 0;

        TrackingAllocator alloc = new TrackingAllocator();
        App app = new App(reject);
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setAllocator(alloc);
        MpaStartupHandler mpa = initiator ? MpaStartupHandler.initiator(settings) : MpaStartupHandler.responder(settings);
        ch.pipeline().addLast(mpa, app);
        try {
            for (byte[] piece : FuzzInput.split(in.rest(), splitSeed)) {
                ch.writeInbound(alloc.track(alloc.heapBuffer(piece.length).writeBytes(piece)));
                drain(ch);
            }
            if (app.completion != null && app.completion.isSuccess()) {
                ch.writeOutbound(alloc.heapBuffer(4).writeInt(0x01020304)); // one ULPDU out, framed as negotiated
            }
            drain(ch);
            ch.close();
        } catch (Throwable t) {
            FuzzChecks.assertTyped(t, TYPED);
        } finally {
            finish(ch);
        }
        app.exceptions.forEach(t -> FuzzChecks.assertTyped(t, TYPED));
        if (app.completion != null && !app.completion.isSuccess()) {
            FuzzChecks.assertTyped(app.completion.cause(), TYPED);
        }
        FuzzChecks.assertNoUntypedLogged(TYPED);
        alloc.assertAllReleased();
    }

    /**
     * The FPDU framer (RFC 5044 §4) with CRC and markers each on or off. Octet 0: bit 0 CRC, 1 markers
     * from the peer, 2 markers to the peer, 3 hold sends until a valid FPDU (rule 4), 4 build the
     * stream (else raw octets). Octet 1: split seed. Octet 2: largest ULPDU accepted (x 256, 0 = 65535).
     * Octet 3: number of corruptions (built streams). Built streams: the rest is ULPDUs (one length
     * octet x 4, then that many octets) framed by a framer with the same settings, then corrupted at
     * (u16 position, u8 xor) pairs; an uncorrupted stream must come back ULPDU for ULPDU.
     */
    @FuzzTest
    void framer(byte[] data) {
        FuzzInput in = new FuzzInput(data);
        int cfg = in.u8();
        int splitSeed = in.u8();
        int max = in.u8() * 256;
        int corruptions = in.u8() & 7;
        boolean crc = (cfg & 1) != 0;
        boolean markersRx = (cfg & 2) != 0;
        boolean markersTx = (cfg & 4) != 0;
        boolean build = (cfg & 0x10) != 0;
        int maxUlpdu = max == 0 ? 0xFFFF : max;

        TrackingAllocator alloc = new TrackingAllocator();
        byte[] stream;
        List<byte[]> sent = new ArrayList<>();
        int[][] flips = new int[corruptions][];
        if (build) {
            for (int i = 0; i < corruptions; i++) {
                flips[i] = new int[] {in.u16(), in.u8() | 1};
            }
            while (in.hasMore()) {
                sent.add(in.bytes(in.u8() * 4));
            }
            stream = frame(sent, crc, markersRx, alloc);
            for (int[] f : flips) {
                if (stream.length > 0) {
                    stream[f[0] % stream.length] ^= (byte) f[1];
                }
            }
        } else {
            stream = in.rest();
        }

        App app = new App(false);
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setAllocator(alloc);
        ch.pipeline().addLast(new MpaFramer(crc, markersTx, markersRx, maxUlpdu, 1024, (cfg & 8) != 0), app);
        try {
            ch.writeOutbound(alloc.heapBuffer(600).writeZero(600)); // crosses a marker position when on
            for (byte[] piece : FuzzInput.split(stream, splitSeed)) {
                ch.writeInbound(alloc.track(alloc.heapBuffer(piece.length).writeBytes(piece)));
                drain(ch);
            }
            ch.close();
        } catch (Throwable t) {
            FuzzChecks.assertTyped(t, TYPED);
        } finally {
            finish(ch);
        }
        app.exceptions.forEach(t -> FuzzChecks.assertTyped(t, TYPED));
        FuzzChecks.assertNoUntypedLogged(TYPED);
        alloc.assertAllReleased();
        if (build && corruptions == 0 && sent.stream().allMatch(u -> u.length <= maxUlpdu)) {
            assertEquals(List.of(), app.exceptions);
            assertEquals(sent.size(), app.received.size(), "ULPDUs delivered");
            for (int i = 0; i < sent.size(); i++) {
                assertArrayEquals(sent.get(i), app.received.get(i), "ULPDU " + i);
            }
        }
    }

    /** The octets a framer with these settings sends for {@code ulpdus}. */
    static byte[] frame(List<byte[]> ulpdus, boolean crc, boolean markers, TrackingAllocator alloc) {
        EmbeddedChannel tx = new EmbeddedChannel();
        tx.config().setAllocator(alloc);
        tx.pipeline().addLast(new MpaFramer(crc, markers, false, 0xFFFF, 1024, false));
        for (byte[] u : ulpdus) {
            tx.writeOutbound(alloc.heapBuffer(u.length).writeBytes(u));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object o; (o = tx.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            byte[] a = new byte[b.readableBytes()];
            b.readBytes(a);
            b.release();
            out.writeBytes(a);
        }
        tx.finishAndReleaseAll();
        return out.toByteArray();
    }

    /** Closes and releases everything; a write the handler failed at the close is typed too. */
    static void finish(EmbeddedChannel ch) {
        try {
            ch.finishAndReleaseAll();
        } catch (Throwable t) {
            FuzzChecks.assertTyped(t, TYPED);
            ch.releaseInbound();
            ch.releaseOutbound();
        }
    }

    static void drain(EmbeddedChannel ch) {
        ch.runPendingTasks();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            io.netty.util.ReferenceCountUtil.release(o);
        }
    }

    /** The application: accepts or rejects the Request, keeps ULPDUs (copied, released) and errors. */
    static final class App extends ChannelInboundHandlerAdapter {
        final boolean reject;
        final List<byte[]> received = new ArrayList<>();
        final List<Throwable> exceptions = new ArrayList<>();
        MpaStartupCompletionEvent completion;

        App(boolean reject) {
            this.reject = reject;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof MpaConnectRequest) {
                MpaConnectRequest r = (MpaConnectRequest) evt;
                if (reject) {
                    r.reject(new byte[] {9});
                } else {
                    r.accept(new byte[] {7, 7});
                }
            } else if (evt instanceof MpaStartupCompletionEvent) {
                if (completion != null) {
                    throw new AssertionError("two completion events");
                }
                completion = (MpaStartupCompletionEvent) evt;
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            try {
                byte[] a = new byte[b.readableBytes()];
                b.getBytes(b.readerIndex(), a);
                received.add(a);
            } finally {
                b.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            exceptions.add(cause);
        }
    }

    @SuppressWarnings("unused")
    private static String hex(byte[] a) {
        return Arrays.toString(a);
    }
}
