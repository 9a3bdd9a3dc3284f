package dev.iwarp.benchmarks.hostile;

import dev.iwarp.mpa.MpaIrdOrd;
import dev.iwarp.mpa.MpaStartupFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;

/**
 * Raw MPA/DDP/RDMAP octets as a hostile peer sends them: an MPA Request with any IRD/ORD and M bit, then FPDUs
 * without CRC (the Request says C=0; the CRC field is present and zero, RFC 5044 §4.1) and without markers (the
 * server's Reply asks for none), built by hand so that nothing in our own stack refuses to send them.
 */
final class RawIwarp {
    /** serve's target region, from its MPA Reply Private Data (rdma-core's rping.c layout: TO, STag, size). */
    record Target(long to, int stag, int size) {
    }

    /**
     * The outcome of an MPA startup: the socket, the Reply's M bit and R bit, serve's target (or null) and the IRD
     * its Reply grants (RFC 6581 §3; -1 without the IRD/ORD words).
     */
    record Session(Socket socket, boolean markers, boolean rejected, Target target, int ird) {
    }

    private RawIwarp() {
    }

    /** Opens a TCP connection from {@code local} (null: any) to serve. */
    static Socket connect(InetSocketAddress serve, String local, int timeoutMs) throws IOException {
        Socket s = new Socket();
        s.setTcpNoDelay(true);
        if (local != null) {
            s.bind(new InetSocketAddress(local, 0));
        }
        s.connect(serve, timeoutMs);
        return s;
    }

    /** The MPA Request (revision 2, enhanced, client-server model, C=0). */
    static byte[] request(int ird, int ord, boolean markers) {
        MpaStartupFrame f = MpaStartupFrame.builder(MpaStartupFrame.Type.REQUEST).revision(2).crc(false)
                .markers(markers).irdOrd(MpaIrdOrd.of(ird, ord)).build();
        ByteBuf b = Unpooled.buffer(f.encodedLength());
        f.encode(b);
        return bytes(b);
    }

    /**
     * Sends an MPA Request and reads the Reply. Returns null if serve closed the connection instead of replying
     * (a refused connection); the caller closes the socket.
     */
    static Session startup(Socket s, int ird, int ord, boolean markers) throws IOException {
        s.getOutputStream().write(request(ird, ord, markers));
        DataInputStream in = new DataInputStream(s.getInputStream());
        byte[] header = new byte[MpaStartupFrame.HEADER_LENGTH];
        if (!readFully(in, header)) {
            return null;
        }
        int pdLength = (header[18] & 0xFF) << 8 | header[19] & 0xFF;
        if (pdLength > MpaStartupFrame.MAX_PRIVATE_DATA) {
            throw new IOException("MPA Reply with " + pdLength + " octets of Private Data");
        }
        byte[] frame = java.util.Arrays.copyOf(header, header.length + pdLength);
        if (!readFully(in, frame, header.length, pdLength)) {
            return null;
        }
        MpaStartupFrame reply = MpaStartupFrame.decode(Unpooled.wrappedBuffer(frame), MpaStartupFrame.MAX_PRIVATE_DATA);
        byte[] pd = reply.ulpPrivateData();
        Target t = null;
        if (pd.length >= 16) {
            ByteBuffer b = ByteBuffer.wrap(pd);
            t = new Target(b.getLong(0), b.getInt(8), b.getInt(12));
        }
        return new Session(s, reply.markers(), reply.rejected(), t,
                reply.irdOrd() == null ? -1 : reply.irdOrd().ird());
    }

    private static boolean readFully(InputStream in, byte[] b) throws IOException {
        return readFully(in, b, 0, b.length);
    }

    private static boolean readFully(InputStream in, byte[] b, int off, int len) throws IOException {
        while (len > 0) {
            int n;
            try {
                n = in.read(b, off, len);
            } catch (java.net.SocketException e) {
                return false; // reset by serve
            }
            if (n < 0) {
                return false;
            }
            off += n;
            len -= n;
        }
        return true;
    }

    /** An FPDU around {@code ulpdu}: ULPDU_Length, the ULPDU, the pad to a multiple of 4, a zero CRC field. */
    static byte[] fpdu(byte[] ulpdu) {
        int pad = (4 - (2 + ulpdu.length) % 4) % 4; // RFC 5044 §4.1
        ByteBuffer b = ByteBuffer.allocate(2 + ulpdu.length + pad + 4);
        b.putShort((short) ulpdu.length).put(ulpdu);
        return b.array();
    }

    /** A single-segment Send (DDP untagged, QN 0) carrying {@code payload}, as message {@code msn}. */
    static byte[] send(int msn, byte[] payload) {
        ByteBuffer u = ByteBuffer.allocate(18 + payload.length);
        u.put((byte) 0x41).put((byte) 0x43).putInt(0).putInt(0).putInt(msn).putInt(0).put(payload);
        return fpdu(u.array());
    }

    /** rping's 16-octet advertisement (TO, STag, size) as Send number {@code msn}. */
    static byte[] advertisement(int msn, long to, int stag, int size) {
        return send(msn, ByteBuffer.allocate(16).putLong(to).putInt(stag).putInt(size).array());
    }

    /** bench's hello asking for {@code depth} receives of {@code size} octets (serve's BenchHello layout). */
    static byte[] benchHello(int msn, int size, int depth) {
        ByteBuffer p = ByteBuffer.allocate(32);
        p.put("iwarp-bench-recv".getBytes(java.nio.charset.StandardCharsets.US_ASCII)).putInt(size).putInt(depth);
        return send(msn, p.array());
    }

    /** A single-segment RDMA Write (DDP tagged) of {@code payload} to (STag, TO); zero-length when empty. */
    static byte[] write(int stag, long to, byte[] payload) {
        ByteBuffer u = ByteBuffer.allocate(14 + payload.length);
        u.put((byte) 0xC1).put((byte) 0x40).putInt(stag).putLong(to).put(payload);
        return fpdu(u.array());
    }

    /** An RDMA Read Request (QN 1, message {@code msn}) of {@code size} octets from serve's (STag, TO). */
    static byte[] readRequest(int msn, int size, int sourceStag, long sourceTo) {
        ByteBuffer u = ByteBuffer.allocate(18 + 28);
        u.put((byte) 0x41).put((byte) 0x41).putInt(0).putInt(1).putInt(msn).putInt(0);
        u.putInt(0x5151).putLong(0).putInt(size).putInt(sourceStag).putLong(sourceTo); // RFC 5040 §4.4
        return fpdu(u.array());
    }

    static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(n);
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    static void quietClose(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // gone already
        }
    }

    /** Writes {@code b}; false if serve closed or reset the connection. */
    static boolean tryWrite(OutputStream out, byte[] b) {
        try {
            out.write(b);
            out.flush();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] a = new byte[b.readableBytes()];
        b.readBytes(a);
        return a;
    }
}
