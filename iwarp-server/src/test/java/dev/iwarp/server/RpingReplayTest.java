package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpPipeline;
import dev.iwarp.mpa.MpaConnectRequest;
import dev.iwarp.mpa.MpaRole;
import dev.iwarp.rdmap.engine.RdmaEngine;
import dev.iwarp.testkit.SharedData;
import dev.iwarp.testkit.TcpConnection;
import dev.iwarp.testkit.TcpStreams;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.RdmaDevice;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replays what siw's rping client sent in {@code rping.pcap} (rdma-core's rping.c, rping.txt) into
 * an in-memory {@code serve} session and checks every octet it answers against what siw's rping
 * server answered. Only the Read Request's sink STag/TO differ (they name our memory), so the
 * replayed Read Responses are re-addressed to the sink our Read Request named.
 */
class RpingReplayTest {
    private static final int MPA_FRAME = 24; // 20-octet header + the 4 RFC 6581 IRD/ORD octets (rping.txt)

    @ParameterizedTest
    @ValueSource(strings = {"rping.pcap", "rping-crc.pcap", "rping-p2p.pcap"})
    void answersRpingClientExactlyLikeSiw(String capture) throws Exception {
        SharedData.assumeAvailable("the real siw rping captures");
        TcpConnection conn = TcpStreams.of(SharedData.siwPcap(capture)).get(0);
        byte[] fromClient = conn.clientToServer().bytes();
        byte[] fromSiw = conn.serverToClient().bytes();
        List<byte[]> clientFpdus = fpdus(fromClient, MPA_FRAME);
        List<byte[]> siwFpdus = fpdus(fromSiw, MPA_FRAME);

        RdmaDevice device = new RdmaDevice();
        ProtectionDomain pd = device.allocPd();
        RpingSession[] session = new RpingSession[1];
        ServerConfig config = ServerConfig.defaults().withTargetSize(0);
        EmbeddedChannel ch = new EmbeddedChannel(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel c) {
                IwarpPipeline.addFraming(c.pipeline(), MpaRole.RESPONDER,
                        ServerMpaOptions.defaults().settings(config));
                c.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                        if (evt instanceof MpaConnectRequest) { // what RpingServer and IwarpConnectionRequest do
                            session[0] = new RpingSession(IwarpWire.domain(pd), ctx.alloc());
                            IwarpWire.Connection conn = IwarpWire.connection(session[0]);
                            RdmaEngine engine = new RdmaEngine(pd, conn.sendCq(), conn.recvCq());
                            ctx.pipeline().addAfter(IwarpPipeline.DDP, IwarpPipeline.RDMAP, engine);
                            ((MpaConnectRequest) evt).accept(new byte[0]);
                            session[0].start(conn.attach(engine.queuePair()));
                        }
                    }
                });
            }
        });
        try {
            ch.writeInbound(Unpooled.wrappedBuffer(fromClient, 0, MPA_FRAME));
            byte[] reply = drain(ch);
            assertEquals(hex(Arrays.copyOf(fromSiw, MPA_FRAME)), hex(reply), "MPA Reply (frame 6 of the .txt)");
            boolean crc = (reply[16] & 0x40) != 0;

            ByteArrayOutputStream ours = new ByteArrayOutputStream();
            byte[] lastReadRequest = null;
            for (byte[] fpdu : clientFpdus) {
                if (opcode(fpdu) == 2) { // Read Response: address it to the sink of our Read Request
                    System.arraycopy(lastReadRequest, 20, fpdu, 4, 12);
                    if (crc) {
                        setCrc(fpdu);
                    }
                }
                ch.writeInbound(Unpooled.wrappedBuffer(fpdu));
                ch.runPendingTasks();
                byte[] out = drain(ch);
                ours.writeBytes(out);
                for (byte[] f : fpdus(out, 0)) {
                    if (opcode(f) == 1) {
                        lastReadRequest = f;
                    }
                }
            }
            List<byte[]> ourFpdus = fpdus(ours.toByteArray(), 0);
            assertEquals(12, siwFpdus.size());
            assertEquals(siwFpdus.size(), ourFpdus.size());
            int sendMsn = 0;
            int readMsn = 0;
            for (int i = 0; i < ourFpdus.size(); i++) {
                byte[] siw = siwFpdus.get(i);
                byte[] our = ourFpdus.get(i);
                int op = opcode(siw);
                assertEquals(op, opcode(our), "opcode of server FPDU " + i);
                ByteBuffer b = ByteBuffer.wrap(our);
                switch (op) {
                    case 1: // Read Request: QN 1, MSN, size 64, source = the client's advert
                        assertEquals(46, b.getShort(0), "ULPDU_Length");
                        assertEquals(1, b.getInt(8), "QN");
                        assertEquals(++readMsn, b.getInt(12), "MSN");
                        assertEquals(64, b.getInt(32), "Read size");
                        // all but the sink STag (20..24) and sink TO (24..32) as siw sent it
                        assertEquals(hex(Arrays.copyOfRange(siw, 0, 20)), hex(Arrays.copyOfRange(our, 0, 20)));
                        assertEquals(hex(Arrays.copyOfRange(siw, 32, siw.length - 4)),
                                hex(Arrays.copyOfRange(our, 32, our.length - 4)));
                        byte[] expectedTrailer = our.clone(); // the CRC covers the sink fields: recompute, not copy
                        if (crc) {
                            setCrc(expectedTrailer);
                        }
                        assertEquals(hex(Arrays.copyOfRange(crc ? expectedTrailer : siw, our.length - 4, our.length)),
                                hex(Arrays.copyOfRange(our, our.length - 4, our.length)), "Read Request CRC field");
                        break;
                    case 0: // RDMA Write: 64 octets to the client's rdma_buf, exactly siw's octets
                        assertEquals(14 + 64, b.getShort(0), "Write ULPDU_Length");
                        assertEquals(hex(siw), hex(our), "Write FPDU " + i);
                        break;
                    case 3: // "go ahead" Send: 16 zero octets, MSN 1, 2, ...
                        assertEquals(18 + 16, b.getShort(0), "Send ULPDU_Length");
                        assertEquals(0, b.getInt(8), "QN");
                        assertEquals(++sendMsn, b.getInt(12), "MSN");
                        assertEquals(hex(siw), hex(our), "Send FPDU " + i);
                        break;
                    default:
                        throw new AssertionError("unexpected opcode " + op);
                }
            }
            assertEquals(3, readMsn);
            assertEquals(6, sendMsn);
            assertEquals(3, session[0].reads());
            assertEquals(3, session[0].writes());
            assertEquals(6, session[0].sends());
            // the third ping's data went back in the last Write, octet for octet as siw's (above); the session keeps
            // its buffers for the next advertisement (none allocated and zeroed per advertisement)
            assertTrue(session[0].holdsBuffers(), "session buffers kept for the next advertisement");
        } finally {
            ch.finishAndReleaseAll();
            device.close();
        }
    }

    /** CRC32C over the FPDU up to its CRC field, stored little-endian (RFC 5044 §4.4). */
    private static void setCrc(byte[] fpdu) {
        CRC32C c = new CRC32C();
        c.update(fpdu, 0, fpdu.length - 4);
        ByteBuffer.wrap(fpdu, fpdu.length - 4, 4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) c.getValue());
    }

    /** The RDMAP opcode: low nibble of the RDMAP control octet (FPDU octet 3). */
    private static int opcode(byte[] fpdu) {
        return fpdu[3] & 0x0F;
    }

    /** Splits a stream (no markers) into FPDUs: 2-octet ULPDU_Length, ULPDU, pad to 4, 4-octet CRC. */
    private static List<byte[]> fpdus(byte[] stream, int from) {
        List<byte[]> out = new ArrayList<>();
        int i = from;
        while (i + 2 <= stream.length) {
            int len = ((stream[i] & 0xFF) << 8) | (stream[i + 1] & 0xFF);
            int total = (2 + len + 3) / 4 * 4 + 4;
            out.add(Arrays.copyOfRange(stream, i, i + total));
            i += total;
        }
        assertEquals(stream.length, i, "stream ends on an FPDU boundary");
        return out;
    }

    private static byte[] drain(EmbeddedChannel ch) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuf b;
        while ((b = ch.readOutbound()) != null) {
            byte[] a = new byte[b.readableBytes()];
            b.readBytes(a);
            b.release();
            out.writeBytes(a);
        }
        return out.toByteArray();
    }

    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }
}
