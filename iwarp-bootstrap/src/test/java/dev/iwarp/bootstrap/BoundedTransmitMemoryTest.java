package dev.iwarp.bootstrap;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.mpa.MpaIrdOrd;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.mpa.MpaStartupFrame;
import dev.iwarp.rdmap.RdmapSegments;
import dev.iwarp.rdmap.ReadRequestHeader;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer posts IRD RDMA Read Requests of 256 MiB each and then stops reading its socket. The server's
 * transmit side must stop at the write-buffer high-water mark (plus one segment) instead of putting
 * 2 GiB of Read Responses into its outbound buffer, and its pooled memory must stay bounded by that
 * mark plus a constant, also with CRC on, where every Read Response segment is a copy. Measured on the
 * server's own allocator and outbound buffer, not by timing.
 */
class BoundedTransmitMemoryTest {
    private static final int READ_SIZE = 256 << 20;
    private static final int IRD = 8;
    private static final int HIGH_WATER = 64 * 1024;
    /** Room for one more segment than the mark allows (the last write before unwritable) and FPDU framing. */
    private static final int ONE_FPDU = 65536 + 16;

    /** With CRC on, every Read Response segment is a copy from the server's allocator: still bounded. */
    @ParameterizedTest(name = "crc={0}")
    @ValueSource(booleans = {false, true})
    void readResponsesToAPeerThatStopsReadingStayWithinTheHighWaterMark(boolean crc) throws Exception {
        // small chunks and no thread caches: used memory follows the live allocations closely
        PooledByteBufAllocator alloc = new PooledByteBufAllocator(true, 1, 1, 4096, 2, 0, 0, false);
        List<Channel> serverChannels = new CopyOnWriteArrayList<>();
        ByteBuf source = UnpooledByteBufAllocator.DEFAULT.directBuffer(READ_SIZE, READ_SIZE);
        source.writerIndex(READ_SIZE);
        try (IwarpStack server = IwarpStack.builder().threads(1).channelHook(ch -> {
            ch.config().setAllocator(alloc);
            ch.config().setOption(ChannelOption.WRITE_BUFFER_WATER_MARK,
                    new WriteBufferWaterMark(HIGH_WATER / 2, HIGH_WATER));
            serverChannels.add(ch);
        }).build()) {
            ProtectionDomain pd = server.allocPd();
            MemoryRegion region = pd.register(source, Access.REMOTE_READ);
            Channel listener = server.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                    MpaSettings.builder().crc(crc).ird(IRD).ord(IRD).build(),
                    req -> req.accept(pd, new CompletionQueue(), new CompletionQueue(), new byte[0]));
            int port = ((InetSocketAddress) listener.localAddress()).getPort();
            try (Socket peer = new Socket(InetAddress.getLoopbackAddress(), port)) {
                peer.setReceiveBufferSize(64 * 1024);
                long baseline = used(alloc);
                startMpa(peer, crc);
                postReads(peer.getOutputStream(), region, crc);
                // the peer reads nothing more: wait until the server can write no further
                Channel ch = serverChannels.get(0);
                long pending = waitUntilStalled(ch);
                long usedWhileStalled = used(alloc) - baseline;
                assertTrue(pending <= HIGH_WATER + ONE_FPDU, "outbound buffer holds " + pending
                        + " octets; the high-water mark is " + HIGH_WATER);
                assertTrue(usedWhileStalled <= HIGH_WATER + 256 * 1024, "pooled memory grew by " + usedWhileStalled
                        + " octets for " + IRD + " Read Responses of " + READ_SIZE + " octets");
                assertTrue(ch.isActive(), "the stream is merely blocked, not broken");
            }
            // the peer has gone: the server's connection closes while its event loop runs, releasing what it
            // still had queued (not at the stack's shutdown)
            assertTrue(serverChannels.get(0).closeFuture().await(10, java.util.concurrent.TimeUnit.SECONDS),
                    "the server closed the connection of a peer that has gone");
            listener.close().sync();
        } finally {
            source.release();
        }
    }

    private static long used(PooledByteBufAllocator alloc) {
        return alloc.metric().usedDirectMemory() + alloc.metric().usedHeapMemory();
    }

    /** Sends an MPA Rev 2 Request (ORD = IRD) and reads the Reply. */
    private static void startMpa(Socket peer, boolean crc) throws Exception {
        MpaStartupFrame request = MpaStartupFrame.builder(MpaStartupFrame.Type.REQUEST).revision(2).crc(crc)
                .irdOrd(MpaIrdOrd.of(IRD, IRD)).build();
        ByteBuf b = Unpooled.buffer(request.encodedLength());
        request.encode(b);
        peer.getOutputStream().write(ByteBufUtil.getBytes(b));
        b.release();
        DataInputStream in = new DataInputStream(peer.getInputStream());
        byte[] header = new byte[MpaStartupFrame.HEADER_LENGTH];
        in.readFully(header);
        in.readFully(new byte[(header[18] & 0xFF) << 8 | header[19] & 0xFF]);
        assertEquals(0, header[16] & 0x20, "accepted (R=0)");
    }

    /** IRD Read Requests (MSN 1..IRD on QN 1), each an FPDU, for the whole region. */
    private static void postReads(OutputStream out, MemoryRegion region, boolean crc) throws Exception {
        ByteArrayOutputStream fpdus = new ByteArrayOutputStream();
        for (int msn = 1; msn <= IRD; msn++) {
            DdpUntaggedSegment s = RdmapSegments.readRequest(msn, new ReadRequestHeader(0x1234, 0, READ_SIZE,
                    region.stag(), region.iova()), UnpooledByteBufAllocator.DEFAULT);
            ByteBuf ulpdu = DdpCodec.encode(s, UnpooledByteBufAllocator.DEFAULT);
            s.release();
            byte[] u = ByteBufUtil.getBytes(ulpdu);
            ulpdu.release();
            ByteArrayOutputStream fpdu = new ByteArrayOutputStream();
            fpdu.write(u.length >>> 8);
            fpdu.write(u.length);
            fpdu.write(u);
            fpdu.write(new byte[(-(2 + u.length)) & 3]);
            CRC32C c = new CRC32C();
            c.update(fpdu.toByteArray());
            int value = crc ? (int) c.getValue() : 0; // the CRC field is 0 when CRC is not in use
            fpdu.write(new byte[] {(byte) value, (byte) (value >>> 8), (byte) (value >>> 16), (byte) (value >>> 24)});
            fpdus.write(fpdu.toByteArray());
        }
        out.write(fpdus.toByteArray());
        out.flush();
    }

    /**
     * Waits (bounded) until the server's channel is unwritable and its outbound buffer stops growing,
     * then returns the octets it holds.
     */
    private static long waitUntilStalled(Channel ch) throws Exception {
        long last = -1;
        int stableRounds = 0;
        for (int i = 0; i < 600 && stableRounds < 5; i++) {
            Thread.sleep(50);
            long pending = ch.eventLoop().submit(() -> {
                ChannelOutboundBuffer b = ch.unsafe().outboundBuffer();
                return b == null ? -1L : b.totalPendingWriteBytes();
            }).get(5, TimeUnit.SECONDS);
            boolean writable = ch.eventLoop().submit(ch::isWritable).get(5, TimeUnit.SECONDS);
            stableRounds = !writable && pending == last ? stableRounds + 1 : 0;
            last = pending;
        }
        assertFalse(ch.isWritable(), "the server's channel never became unwritable");
        return last;
    }
}
