package dev.iwarp.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads the TCP segments out of a classic libpcap capture file (what {@code tcpdump -w} writes).
 *
 * <p>Supported: both byte orders, microsecond ({@code a1b2c3d4}) and nanosecond ({@code a1b23c4d})
 * timestamps; link types Ethernet (1, with 802.1Q/802.1ad tags), BSD null/loopback (0, 108), Linux
 * cooked SLL (113) and SLL2 (276), raw IP (101, 228, 229); IPv4 and IPv6 (with the common extension
 * headers). Frames that are not TCP over IP (ARP, UDP, ...) and IP fragments other than a whole
 * datagram are skipped but still counted, so {@link TcpSegment#frame()} is tshark's frame number.
 * pcapng files are rejected with a hint to convert them ({@code editcap -F pcap in.pcapng out.pcap}).
 *
 * <p>A frame cut short by the capture's snap length makes {@link #read} fail: a reassembled stream
 * with silently missing bytes would mislead any test built on it.
 */
public final class Pcap {

    /** LINKTYPE_NULL: 4-byte address family in the capturing host's byte order. */
    public static final int LINKTYPE_NULL = 0;
    /** LINKTYPE_ETHERNET. */
    public static final int LINKTYPE_ETHERNET = 1;
    /** LINKTYPE_RAW: raw IPv4 or IPv6. */
    public static final int LINKTYPE_RAW = 101;
    /** LINKTYPE_LOOP: OpenBSD loopback, 4-byte address family in network byte order. */
    public static final int LINKTYPE_LOOP = 108;
    /** LINKTYPE_LINUX_SLL: Linux "cooked" capture v1 ({@code tcpdump -i any}). */
    public static final int LINKTYPE_LINUX_SLL = 113;
    /** LINKTYPE_IPV4: raw IPv4. */
    public static final int LINKTYPE_IPV4 = 228;
    /** LINKTYPE_IPV6: raw IPv6. */
    public static final int LINKTYPE_IPV6 = 229;
    /** LINKTYPE_LINUX_SLL2: Linux "cooked" capture v2. */
    public static final int LINKTYPE_LINUX_SLL2 = 276;

    private static final int ETHERTYPE_IPV4 = 0x0800;
    private static final int ETHERTYPE_IPV6 = 0x86DD;
    private static final int PROTO_TCP = 6;

    private final int linkType;
    private final int frameCount;
    private final List<TcpSegment> segments;

    private Pcap(int linkType, int frameCount, List<TcpSegment> segments) {
        this.linkType = linkType;
        this.frameCount = frameCount;
        this.segments = List.copyOf(segments);
    }

    /**
     * Reads a capture file.
     *
     * @throws IOException              if the file cannot be read
     * @throws IllegalArgumentException if it is not a classic pcap file or a frame is malformed or truncated
     */
    public static Pcap read(Path file) throws IOException {
        try {
            return parse(Files.readAllBytes(file));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Parses the bytes of a capture file.
     *
     * @throws IllegalArgumentException if it is not a classic pcap file or a frame is malformed or truncated
     */
    public static Pcap parse(byte[] file) {
        ByteBuffer in = ByteBuffer.wrap(file);
        require(file.length >= 24, "shorter than a pcap file header");
        int magic = in.order(ByteOrder.BIG_ENDIAN).getInt(0);
        boolean nanos;
        switch (magic) {
            case 0xa1b2c3d4 -> nanos = false;
            case 0xa1b23c4d -> nanos = true;
            case 0xd4c3b2a1 -> { nanos = false; in.order(ByteOrder.LITTLE_ENDIAN); }
            case 0x4d3cb2a1 -> { nanos = true; in.order(ByteOrder.LITTLE_ENDIAN); }
            case 0x0a0d0d0a -> throw new IllegalArgumentException(
                    "pcapng is not supported; convert with: editcap -F pcap in.pcapng out.pcap");
            default -> throw new IllegalArgumentException("not a pcap file, magic " + Integer.toHexString(magic));
        }
        int linkType = in.getInt(20) & 0xFFFF; // upper bits may carry FCS information
        require(isSupported(linkType), "unsupported link type " + linkType);

        List<TcpSegment> segments = new ArrayList<>();
        int pos = 24;
        int frame = 0;
        while (pos < file.length) {
            frame++;
            require(pos + 16 <= file.length, "frame " + frame + ": truncated record header");
            long sec = in.getInt(pos) & 0xFFFFFFFFL;
            long frac = in.getInt(pos + 4) & 0xFFFFFFFFL;
            int capLen = in.getInt(pos + 8);
            int wireLen = in.getInt(pos + 12);
            pos += 16;
            require(capLen >= 0 && pos + capLen <= file.length, "frame " + frame + ": truncated record");
            Instant ts = Instant.ofEpochSecond(sec, nanos ? frac : frac * 1000);
            TcpSegment s = decodeFrame(frame, ts, wireLen, linkType, Arrays.copyOfRange(file, pos, pos + capLen));
            if (s != null) {
                segments.add(s);
            }
            pos += capLen;
        }
        return new Pcap(linkType, frame, segments);
    }

    /** The file's link type (a {@code LINKTYPE_*} value, e.g. {@link #LINKTYPE_ETHERNET}). */
    public int linkType() {
        return linkType;
    }

    /** Number of frames in the file, TCP or not. */
    public int frameCount() {
        return frameCount;
    }

    /** Every TCP segment in the file, in capture order. */
    public List<TcpSegment> tcpSegments() {
        return segments;
    }

    private static boolean isSupported(int linkType) {
        return switch (linkType) {
            case LINKTYPE_NULL, LINKTYPE_ETHERNET, LINKTYPE_RAW, LINKTYPE_LOOP, LINKTYPE_LINUX_SLL,
                 LINKTYPE_IPV4, LINKTYPE_IPV6, LINKTYPE_LINUX_SLL2 -> true;
            default -> false;
        };
    }

    /** Returns the TCP segment in this frame, or null if it holds none. */
    private static TcpSegment decodeFrame(int frame, Instant ts, int wireLen, int linkType, byte[] f) {
        ByteBuffer b = ByteBuffer.wrap(f); // big-endian: network byte order from here on
        int ip;          // offset of the IP header
        int etherType;   // 0 = look at the IP version nibble
        switch (linkType) {
            case LINKTYPE_ETHERNET -> {
                if (f.length < 14) return null;
                ip = 14;
                etherType = b.getShort(12) & 0xFFFF;
                while ((etherType == 0x8100 || etherType == 0x88A8 || etherType == 0x9100) && f.length >= ip + 4) {
                    etherType = b.getShort(ip + 2) & 0xFFFF;
                    ip += 4;
                }
            }
            case LINKTYPE_LINUX_SLL -> {
                if (f.length < 16) return null;
                ip = 16;
                etherType = b.getShort(14) & 0xFFFF;
            }
            case LINKTYPE_LINUX_SLL2 -> {
                if (f.length < 20) return null;
                ip = 20;
                etherType = b.getShort(0) & 0xFFFF;
            }
            case LINKTYPE_NULL, LINKTYPE_LOOP -> { // the address family's value varies by OS
                ip = 4;
                etherType = 0;
            }
            default -> { // raw IP
                ip = 0;
                etherType = 0;
            }
        }
        if (ip >= f.length) return null;
        if (etherType == 0) {
            int version = (f[ip] >> 4) & 0xF;
            etherType = version == 4 ? ETHERTYPE_IPV4 : version == 6 ? ETHERTYPE_IPV6 : -1;
        }
        String where = "frame " + frame + ": ";
        byte[] srcAddr;
        byte[] dstAddr;
        int tcp;  // offset of the TCP header
        int end;  // end of the IP datagram (excludes Ethernet padding)
        if (etherType == ETHERTYPE_IPV4) {
            require(f.length >= ip + 20, where + "truncated IPv4 header");
            int ihl = (f[ip] & 0xF) * 4;
            require(ihl >= 20, where + "bad IPv4 header length " + ihl);
            int total = b.getShort(ip + 2) & 0xFFFF;
            int fragment = b.getShort(ip + 6) & 0x3FFF; // MF flag + fragment offset
            if (f[ip + 9] != PROTO_TCP || fragment != 0) return null;
            srcAddr = Arrays.copyOfRange(f, ip + 12, ip + 16);
            dstAddr = Arrays.copyOfRange(f, ip + 16, ip + 20);
            tcp = ip + ihl;
            end = total == 0 ? wireLen : ip + total; // total 0: segmentation offload on the sender
        } else if (etherType == ETHERTYPE_IPV6) {
            require(f.length >= ip + 40, where + "truncated IPv6 header");
            int next = f[ip + 6] & 0xFF;
            srcAddr = Arrays.copyOfRange(f, ip + 8, ip + 24);
            dstAddr = Arrays.copyOfRange(f, ip + 24, ip + 40);
            end = ip + 40 + (b.getShort(ip + 4) & 0xFFFF);
            tcp = ip + 40;
            while (next != PROTO_TCP) {
                if (tcp + 8 > f.length) return null;
                switch (next) {
                    case 0, 43, 60 -> { next = f[tcp] & 0xFF; tcp += ((f[tcp + 1] & 0xFF) + 1) * 8; } // hop-by-hop, routing, dest opts
                    case 51 -> { next = f[tcp] & 0xFF; tcp += ((f[tcp + 1] & 0xFF) + 2) * 4; }           // AH
                    case 44 -> {                                                                         // fragment
                        if ((b.getShort(tcp + 2) & 0xFFF9) != 0) return null; // offset != 0 or more fragments
                        next = f[tcp] & 0xFF;
                        tcp += 8;
                    }
                    default -> { return null; }
                }
            }
        } else {
            return null;
        }
        require(end <= wireLen, where + "IP length beyond the frame");
        require(end <= f.length, where + "truncated by the capture's snap length ("
                + f.length + " of " + wireLen + " octets captured)");
        require(tcp + 20 <= end, where + "truncated TCP header");
        int dataOffset = ((f[tcp + 12] >> 4) & 0xF) * 4;
        require(dataOffset >= 20 && tcp + dataOffset <= end, where + "bad TCP data offset " + dataOffset);
        return new TcpSegment(frame, ts, wireLen,
                address(srcAddr), b.getShort(tcp) & 0xFFFF,
                address(dstAddr), b.getShort(tcp + 2) & 0xFFFF,
                b.getInt(tcp + 4) & 0xFFFFFFFFL, b.getInt(tcp + 8) & 0xFFFFFFFFL,
                f[tcp + 13] & 0xFF,
                Arrays.copyOfRange(f, tcp + dataOffset, end));
    }

    private static InetAddress address(byte[] raw) {
        try {
            return InetAddress.getByAddress(raw); // no name lookup
        } catch (UnknownHostException e) {
            throw new AssertionError(e); // only thrown for a bad length
        }
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
