package dev.iwarp.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The facts in a capture's {@code NAME.txt} (tshark output written by the harness's
 * {@code pcap-summary.sh}), parsed so tests can compare them with what {@link Pcap} and
 * {@link TcpStreams} compute. Only the parts the tests use are parsed.
 */
record TsharkSummary(List<Conversation> conversations, List<FrameLine> frames, List<MpaFrame> mpaFrames,
                     List<OpcodeCount> opcodes, List<CrcValueCount> crcValues, int goodCrcs) {

    /** tshark prints sizes of 10000 octets and more in truncated kB, MB. */
    record Size(long value, String unit) {
        boolean matches(long octets) {
            return switch (unit) {
                case "bytes" -> octets == value;
                case "kB" -> octets >= 10_000 && octets / 1000 == value;
                case "MB" -> octets / 1_000_000 == value;
                default -> throw new IllegalArgumentException(unit);
            };
        }
    }

    /** A line of {@code tshark -z conv,tcp}; "A" is the side that sent the first packet. */
    record Conversation(String addressA, int portA, String addressB, int portB,
                        int framesBtoA, Size bytesBtoA, int framesAtoB, Size bytesAtoB,
                        double relativeStart, double duration) {
    }

    /**
     * A line of the frame list. Ports are null for lines whose info column does not show them (HTTP);
     * flags, seq, ack and len are null unless the protocol column says TCP.
     */
    record FrameLine(int frame, double time, String src, String dst, String protocol, int length,
                     Integer srcPort, Integer dstPort, Set<String> flags, Long seq, Long ack, Integer len) {
    }

    /** An MPA Request or Reply with its bytes (header, then private data). */
    record MpaFrame(int frame, boolean request, int srcPort, int dstPort, byte[] bytes) {
    }

    /** {@code opcode 0x03: 12 FPDUs, first in frame 8}. */
    record OpcodeCount(int opcode, int fpdus, int firstFrame) {
    }

    /** {@code 0x00000000: 21 FPDUs} in the CRC-not-negotiated list. */
    record CrcValueCount(long value, int fpdus) {
    }

    private static final Pattern CONVERSATION = Pattern.compile(
            "(\\S+):(\\d+)\\s+<->\\s+(\\S+):(\\d+)\\s+(\\d+) (\\d+) (bytes|kB|MB)\\s+(\\d+) (\\d+) (bytes|kB|MB)"
                    + "\\s+\\d+ \\d+ (?:bytes|kB|MB)\\s+([\\d.]+)\\s+([\\d.]+)\\s*");
    private static final Pattern FRAME = Pattern.compile(
            "\\s*(\\d+)\\s+([\\d.]+)\\s+(\\S+) → (\\S+)\\s+(\\S+) (\\d+) (.*)");
    private static final Pattern PORTS = Pattern.compile("(\\d+) (?:→|>) (\\d+)\\b.*");
    private static final Pattern FLAGS = Pattern.compile("\\[([A-Z]+(?:, [A-Z]+)*)]");
    private static final Pattern MPA = Pattern.compile("frame (\\d+): (Request|Reply) (\\d+) -> (\\d+),.*");
    private static final Pattern MPA_BYTES = Pattern.compile("\\s+bytes: ([0-9a-f ]+)\\s*");
    private static final Pattern OPCODE = Pattern.compile("\\s+opcode 0x(\\p{XDigit}+): (\\d+) FPDUs, first in frame (\\d+)");
    private static final Pattern CRC_VALUE = Pattern.compile("\\s+0x(\\p{XDigit}{8}): (\\d+) FPDUs");
    private static final Pattern GOOD_CRC = Pattern.compile("\\s+(\\d+) Good CRC32");

    static TsharkSummary read(Path txt) throws IOException {
        List<Conversation> conversations = new ArrayList<>();
        List<FrameLine> frames = new ArrayList<>();
        List<MpaFrame> mpa = new ArrayList<>();
        List<OpcodeCount> opcodes = new ArrayList<>();
        List<CrcValueCount> crcValues = new ArrayList<>();
        int goodCrcs = 0;
        String section = "";
        MpaFrame pendingMpa = null; // header line seen, bytes line not yet
        for (String line : Files.readAllLines(txt)) {
            if (line.startsWith("## ")) {
                section = line.substring(3);
                continue;
            }
            Matcher m;
            if (section.startsWith("TCP conversations") && (m = CONVERSATION.matcher(line)).matches()) {
                conversations.add(new Conversation(m.group(1), Integer.parseInt(m.group(2)), m.group(3),
                        Integer.parseInt(m.group(4)),
                        Integer.parseInt(m.group(5)), new Size(Long.parseLong(m.group(6)), m.group(7)),
                        Integer.parseInt(m.group(8)), new Size(Long.parseLong(m.group(9)), m.group(10)),
                        Double.parseDouble(m.group(11)), Double.parseDouble(m.group(12))));
            } else if (section.startsWith("Frames") && (m = FRAME.matcher(line)).matches()) {
                frames.add(frameLine(m));
            } else if (section.startsWith("MPA Request")) {
                if ((m = MPA.matcher(line)).matches()) {
                    pendingMpa = new MpaFrame(Integer.parseInt(m.group(1)), m.group(2).equals("Request"),
                            Integer.parseInt(m.group(3)), Integer.parseInt(m.group(4)), null);
                } else if (pendingMpa != null && (m = MPA_BYTES.matcher(line)).matches()) {
                    mpa.add(new MpaFrame(pendingMpa.frame(), pendingMpa.request(), pendingMpa.srcPort(),
                            pendingMpa.dstPort(), Hex.parse(m.group(1))));
                    pendingMpa = null;
                }
            } else if (section.startsWith("RDMAP opcodes") && (m = OPCODE.matcher(line)).matches()) {
                opcodes.add(new OpcodeCount(Integer.parseInt(m.group(1), 16), Integer.parseInt(m.group(2)),
                        Integer.parseInt(m.group(3))));
            } else if (section.startsWith("MPA CRC")) {
                if ((m = CRC_VALUE.matcher(line)).matches()) {
                    crcValues.add(new CrcValueCount(Long.parseLong(m.group(1), 16), Integer.parseInt(m.group(2))));
                } else if ((m = GOOD_CRC.matcher(line)).matches()) {
                    goodCrcs += Integer.parseInt(m.group(1));
                }
            }
        }
        return new TsharkSummary(conversations, frames, mpa, opcodes, crcValues, goodCrcs);
    }

    private static FrameLine frameLine(Matcher m) {
        String protocol = m.group(5);
        String info = m.group(7);
        Integer srcPort = null;
        Integer dstPort = null;
        Matcher p = PORTS.matcher(info);
        if (p.matches()) {
            srcPort = Integer.parseInt(p.group(1));
            dstPort = Integer.parseInt(p.group(2));
        }
        Set<String> flags = null;
        Long seq = null;
        Long ack = null;
        Integer len = null;
        if (protocol.equals("TCP")) {
            Matcher f = FLAGS.matcher(info);
            flags = f.find() ? new LinkedHashSet<>(List.of(f.group(1).split(", "))) : Set.of();
            seq = field(info, "Seq");
            ack = field(info, "Ack");
            Long l = field(info, "Len");
            len = l == null ? null : l.intValue();
        }
        return new FrameLine(Integer.parseInt(m.group(1)), Double.parseDouble(m.group(2)), m.group(3), m.group(4),
                protocol, Integer.parseInt(m.group(6)), srcPort, dstPort, flags, seq, ack, len);
    }

    private static Long field(String info, String name) {
        Matcher m = Pattern.compile("\\b" + name + "=(\\d+)").matcher(info);
        return m.find() ? Long.parseLong(m.group(1)) : null;
    }
}
