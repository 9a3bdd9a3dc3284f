package dev.iwarp.rdmap;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.mpa.MpaFramer;
import dev.iwarp.mpa.MpaStartupFrame;
import dev.iwarp.testkit.SharedData;
import dev.iwarp.testkit.TcpConnection;
import dev.iwarp.testkit.TcpStreams;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RDMA Read Requests and Responses in real siw traffic ({@code ../shared/testdata/siw-pcap/}): the
 * first Read Request decodes to the fields tshark shows in the capture's {@code .txt}, the counts
 * match tshark's, and every Read Response message answers its request (RFC 5040 §4.5, §5.2): in
 * request order, to the Data Sink STag, TO continuous from the Data Sink TO, total length = size.
 */
class SiwCaptureReadTest {

    @BeforeAll
    static void needsSharedData() {
        SharedData.assumeAvailable("the real siw captures");
    }

    /** The ULPDU stream of one direction, as DDP segments. */
    record Direction(List<DdpSegment> segments) {
        List<ReadRequestHeader> readRequests() {
            List<ReadRequestHeader> list = new ArrayList<>();
            for (DdpSegment s : segments) {
                if (RdmapSegments.opcode(s) == RdmapOpcode.RDMA_READ_REQUEST) {
                    DdpUntaggedSegment u = (DdpUntaggedSegment) s;
                    assertEquals(1, u.qn(), "Read Requests travel on QN 1");
                    assertEquals(ReadRequestHeader.LENGTH, u.payloadLength(), "28 octets, nothing else");
                    assertTrue(u.isLast());
                    list.add(ReadRequestHeader.decode(u.payload(), u.payload().readerIndex()));
                }
            }
            return list;
        }

        List<List<DdpTaggedSegment>> readResponses() {
            List<List<DdpTaggedSegment>> messages = new ArrayList<>();
            List<DdpTaggedSegment> current = new ArrayList<>();
            for (DdpSegment s : segments) {
                if (RdmapSegments.opcode(s) == RdmapOpcode.RDMA_READ_RESPONSE) {
                    current.add((DdpTaggedSegment) s);
                    if (s.isLast()) {
                        messages.add(current);
                        current = new ArrayList<>();
                    }
                }
            }
            assertTrue(current.isEmpty(), "no unfinished Read Response at the end");
            return messages;
        }

        void release() {
            segments.forEach(DdpSegment::release);
        }
    }

    static Direction direction(byte[] stream, boolean crc) {
        MpaStartupFrame frame = MpaStartupFrame.decode(Unpooled.wrappedBuffer(stream), 512);
        assertNotNull(frame);
        EmbeddedChannel ch = new EmbeddedChannel(new MpaFramer(crc, false, false, 0xFFFF, 8192, false));
        ch.writeInbound(Unpooled.wrappedBuffer(stream, frame.encodedLength(), stream.length - frame.encodedLength()));
        List<DdpSegment> segments = new ArrayList<>();
        for (ByteBuf ulpdu; (ulpdu = ch.readInbound()) != null; ) {
            try {
                segments.add(DdpCodec.decode(ulpdu));
            } finally {
                ulpdu.release();
            }
        }
        ch.finishAndReleaseAll();
        return new Direction(segments);
    }

    @ParameterizedTest
    @ValueSource(strings = {"rping", "rping-crc", "rping-p2p", "ib_read_bw", "probe-crc-host-initiator"})
    void readRequestsAndResponses(String name) throws Exception {
        String txt = Files.readString(SharedData.siwPcap(name + ".txt"));
        ReadRequestHeader first = null;
        int requests = 0;
        int responses = 0;
        for (TcpConnection c : TcpStreams.of(SharedData.siwPcap(name + ".pcap"))) {
            byte[] up = c.clientToServer().bytes();
            byte[] down = c.serverToClient().bytes();
            if (up.length < 16 || !Arrays.equals(Arrays.copyOf(up, 16), MpaStartupFrame.Type.REQUEST.key())) {
                continue; // not MPA
            }
            boolean crc = MpaStartupFrame.decode(Unpooled.wrappedBuffer(up), 512).crc()
                    || MpaStartupFrame.decode(Unpooled.wrappedBuffer(down), 512).crc();
            Direction c2s = direction(up, crc);
            Direction s2c = direction(down, crc);
            try {
                for (Direction[] pair : new Direction[][] {{c2s, s2c}, {s2c, c2s}}) {
                    List<ReadRequestHeader> reqs = pair[0].readRequests();
                    List<List<DdpTaggedSegment>> resps = pair[1].readResponses();
                    if (first == null && !reqs.isEmpty()) {
                        first = reqs.get(0);
                    }
                    requests += reqs.size();
                    responses += resps.size();
                    for (int i = 0; i < resps.size(); i++) {
                        assertAnswers(reqs.get(i), resps.get(i), name + " response " + i);
                    }
                    // a requester with unanswered requests is allowed (the probe never answered)
                    assertTrue(resps.size() <= reqs.size(), "no Read Response without a Read Request");
                }
            } finally {
                c2s.release();
                s2c.release();
            }
        }
        assertEquals(fpdusOfOpcode(txt, 0x01), requests, "Read Requests, as tshark counted");
        assertEquals(fpdusOfOpcode(txt, 0x02), responses, "Read Responses (single-segment here), as tshark counted");
        assertNotNull(first);
        assertEquals(tshark(txt, "Data Sink STag"), Integer.toUnsignedLong(first.sinkStag()));
        assertEquals(tshark(txt, "Data Sink Tagged Offset"), first.sinkTo());
        assertEquals(tshark(txt, "RDMA Read Message Size"), first.size());
        assertEquals(tshark(txt, "Data Source STag"), Integer.toUnsignedLong(first.sourceStag()));
        assertEquals(tshark(txt, "Data Source Tagged Offset"), first.sourceTo());
    }

    private static void assertAnswers(ReadRequestHeader request, List<DdpTaggedSegment> response, String what) {
        long offset = 0;
        for (DdpTaggedSegment s : response) {
            assertEquals(request.sinkStag(), s.stag(), what + ": Data Sink STag");
            assertEquals(request.sinkTo() + offset, s.to(), what + ": TO continues from the Data Sink TO");
            offset += s.payloadLength();
        }
        assertEquals(request.size(), offset, what + ": total length = RDMA Read Message Size");
    }

    /** "opcode 0x01: 3 FPDUs" in the .txt; 0 when absent. */
    private static int fpdusOfOpcode(String txt, int opcode) {
        Matcher m = Pattern.compile(String.format("opcode 0x%02x: (\\d+) FPDUs", opcode)).matcher(txt);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    /** A field of the first Read Request's tshark detail, e.g. "Data Sink STag: 0xab8af000" or "... Size: 64 bytes". */
    private static long tshark(String txt, String field) {
        int section = txt.indexOf("## First FPDU with RDMAP opcode 0x01");
        assertTrue(section >= 0, "the .txt details a Read Request");
        Matcher m = Pattern.compile(Pattern.quote(field) + ": (0x[0-9a-f]+|\\d+)").matcher(txt);
        assertTrue(m.find(section), field);
        String v = m.group(1);
        return v.startsWith("0x") ? Long.parseUnsignedLong(v.substring(2), 16) : Long.parseLong(v);
    }
}
