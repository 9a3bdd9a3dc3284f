package dev.iwarp.testkit;

import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Instant;

/** Writes small synthetic classic-pcap files for {@link PcapTest}. Checksums are left zero. */
final class PcapBuilder {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteOrder order;
    private final boolean nanos;

    PcapBuilder(int linkType, ByteOrder order, boolean nanos) {
        this.order = order;
        this.nanos = nanos;
        ByteBuffer h = ByteBuffer.allocate(24).order(order);
        h.putInt(nanos ? 0xa1b23c4d : 0xa1b2c3d4).putShort((short) 2).putShort((short) 4)
                .putInt(0).putInt(0).putInt(262144).putInt(linkType);
        out.writeBytes(h.array());
    }

    /** Adds a frame captured whole. */
    PcapBuilder frame(Instant ts, byte[] frame) {
        return frame(ts, frame, frame.length);
    }

    /** Adds a frame of which only {@code frame} was captured out of {@code wireLength} octets. */
    PcapBuilder frame(Instant ts, byte[] frame, int wireLength) {
        ByteBuffer h = ByteBuffer.allocate(16).order(order);
        h.putInt((int) ts.getEpochSecond()).putInt(nanos ? ts.getNano() : ts.getNano() / 1000)
                .putInt(frame.length).putInt(wireLength);
        out.writeBytes(h.array());
        out.writeBytes(frame);
        return this;
    }

    byte[] build() {
        return out.toByteArray();
    }

    /** A TCP segment with a 20-octet header (no options). */
    static byte[] tcp(int srcPort, int dstPort, long seq, long ack, int flags, byte[] payload) {
        return ByteBuffer.allocate(20 + payload.length)
                .putShort((short) srcPort).putShort((short) dstPort).putInt((int) seq).putInt((int) ack)
                .put((byte) 0x50).put((byte) flags).putShort((short) 65535).putInt(0)
                .put(payload).array();
    }

    /** An IPv4 datagram (no options) carrying {@code tcp}. */
    static byte[] ipv4(String src, String dst, byte[] tcp) {
        return ipv4(src, dst, 6, tcp);
    }

    /** An IPv4 datagram (no options) of the given protocol. */
    static byte[] ipv4(String src, String dst, int protocol, byte[] payload) {
        return ByteBuffer.allocate(20 + payload.length)
                .put((byte) 0x45).put((byte) 0).putShort((short) (20 + payload.length))
                .putInt(0x00004000) // id 0, DF
                .put((byte) 64).put((byte) protocol).putShort((short) 0)
                .put(address(src)).put(address(dst)).put(payload).array();
    }

    /** An IPv6 packet carrying {@code tcp} behind an 8-octet hop-by-hop options header. */
    static byte[] ipv6WithHopByHop(String src, String dst, byte[] tcp) {
        return ByteBuffer.allocate(48 + tcp.length)
                .putInt(0x60000000).putShort((short) (8 + tcp.length)).put((byte) 0).put((byte) 64)
                .put(address(src)).put(address(dst))
                .put((byte) 6).put((byte) 0).put(new byte[] {1, 4, 0, 0, 0, 0}) // next TCP, len 0, PadN
                .put(tcp).array();
    }

    static byte[] ethernet(int etherType, byte[] payload) {
        return ByteBuffer.allocate(14 + payload.length)
                .put(new byte[] {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2}).putShort((short) etherType).put(payload).array();
    }

    static byte[] sll(int etherType, byte[] payload) {
        return ByteBuffer.allocate(16 + payload.length)
                .putShort((short) 0).putShort((short) 1).putShort((short) 6).put(new byte[8])
                .putShort((short) etherType).put(payload).array();
    }

    static byte[] sll2(int etherType, byte[] payload) {
        return ByteBuffer.allocate(20 + payload.length)
                .putShort((short) etherType).putShort((short) 0).putInt(1).putShort((short) 1)
                .put((byte) 0).put((byte) 6).put(new byte[8]).put(payload).array();
    }

    /** BSD loopback header: the address family, here little-endian AF_INET (2) as a Linux/x86 host writes it. */
    static byte[] nullHeader(byte[] payload) {
        return ByteBuffer.allocate(4 + payload.length).order(ByteOrder.LITTLE_ENDIAN).putInt(2).put(payload).array();
    }

    static byte[] concat(byte[] a, byte[] b) {
        return ByteBuffer.allocate(a.length + b.length).put(a).put(b).array();
    }

    private static byte[] address(String literal) {
        try {
            return InetAddress.getByName(literal).getAddress(); // literals only: no lookup
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(literal, e);
        }
    }
}
