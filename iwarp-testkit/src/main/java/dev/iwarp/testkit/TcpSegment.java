package dev.iwarp.testkit;

import java.net.InetAddress;
import java.time.Instant;

/**
 * One TCP segment read from a capture by {@link Pcap}.
 *
 * <p>{@code seq} and {@code ack} are the raw (absolute, unsigned 32-bit) TCP numbers, not
 * tshark's relative ones; {@link TcpStreams} turns them into stream offsets. The payload array is
 * not copied: do not modify it. Like every record holding an array, {@code equals} compares the
 * payload by identity.
 *
 * @param frame      1-based frame number in the capture file, counting every frame (as tshark does)
 * @param timestamp  capture time of the frame
 * @param wireLength the frame's original length on the wire (tshark's frame length)
 * @param src        source IP address
 * @param srcPort    source TCP port
 * @param dst        destination IP address
 * @param dstPort    destination TCP port
 * @param seq        sequence number, 0..2<sup>32</sup>-1
 * @param ack        acknowledgment number, 0..2<sup>32</sup>-1 (meaningful only with {@link #isAck()})
 * @param flags      the TCP flags byte (see the {@code FIN}..{@code ACK} constants)
 * @param payload    the TCP payload (empty for pure ACKs, SYNs, ...)
 */
public record TcpSegment(int frame, Instant timestamp, int wireLength,
                         InetAddress src, int srcPort, InetAddress dst, int dstPort,
                         long seq, long ack, int flags, byte[] payload) {

    /** TCP flag bit FIN. */
    public static final int FIN = 0x01;
    /** TCP flag bit SYN. */
    public static final int SYN = 0x02;
    /** TCP flag bit RST. */
    public static final int RST = 0x04;
    /** TCP flag bit PSH. */
    public static final int PSH = 0x08;
    /** TCP flag bit ACK. */
    public static final int ACK = 0x10;

    /** Whether the SYN flag is set. */
    public boolean isSyn() {
        return (flags & SYN) != 0;
    }

    /** Whether the FIN flag is set. */
    public boolean isFin() {
        return (flags & FIN) != 0;
    }

    /** Whether the RST flag is set. */
    public boolean isRst() {
        return (flags & RST) != 0;
    }

    /** Whether the PSH flag is set. */
    public boolean isPsh() {
        return (flags & PSH) != 0;
    }

    /** Whether the ACK flag is set. */
    public boolean isAck() {
        return (flags & ACK) != 0;
    }

    /** Number of payload octets. */
    public int length() {
        return payload.length;
    }

    /** Like tshark's info column: {@code "4: 10.0.2.15:48664 → 10.0.2.15:7174 [PSH, ACK] Len=24"}. */
    @Override
    public String toString() {
        StringBuilder f = new StringBuilder();
        String[] names = {"FIN", "SYN", "RST", "PSH", "ACK"};
        int[] order = {1, 0, 2, 3, 4}; // tshark prints SYN before FIN
        for (int i : order) {
            if ((flags & (1 << i)) != 0) {
                f.append(f.length() == 0 ? "" : ", ").append(names[i]);
            }
        }
        return frame + ": " + src.getHostAddress() + ":" + srcPort + " → " + dst.getHostAddress() + ":" + dstPort
                + " [" + f + "] seq=" + seq + " ack=" + ack + " Len=" + payload.length;
    }
}
