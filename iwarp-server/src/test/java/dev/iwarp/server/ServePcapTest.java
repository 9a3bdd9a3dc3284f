package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.testkit.TcpConnection;
import dev.iwarp.testkit.TcpStreams;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code serve --pcap FILE}: the capture holds every connection's TCP octets, MPA frames first. */
class ServePcapTest {

    @Test
    void pcapHoldsBothDirectionsOfEveryConnection(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("serve.pcap");
        PcapFile capture = PcapFile.create(file);
        RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).channelHook(capture::install).build()));
        try (IwarpStack clientStack = IwarpStack.builder().threads(1).build()) {
            for (int c = 0; c < 2; c++) {
                try (RpingClient client = RpingClient.connect(clientStack, server.localAddress(),
                        RpingClient.rpingSettings(false), 64, 10_000)) {
                    for (int n = 0; n < 3; n++) {
                        client.ping(n);
                    }
                }
            }
        } finally {
            server.close();
            capture.close();
        }
        List<TcpConnection> conns = TcpStreams.of(file);
        assertEquals(2, conns.size(), "one TCP connection per client");
        byte[] reqKey = "MPA ID Req Frame".getBytes(StandardCharsets.US_ASCII);
        byte[] repKey = "MPA ID Rep Frame".getBytes(StandardCharsets.US_ASCII);
        for (TcpConnection conn : conns) {
            byte[] c2s = conn.clientToServer().bytes();
            byte[] s2c = conn.serverToClient().bytes();
            assertArrayEquals(reqKey, Arrays.copyOf(c2s, 16));
            assertArrayEquals(repKey, Arrays.copyOf(s2c, 16));
            // after the Request (20 + 4 octets, Rev 2 IRD/ORD), 6 Sends of 16 octets (40-octet FPDUs)
            // and 3 Read Responses of 64 octets (84-octet FPDUs) from the client
            assertEquals(24 + 6 * 40 + 3 * 84, c2s.length);
            assertTrue(s2c.length > 24, "the server's FPDUs follow its Reply");
            // one packet per flush: every packet the server wrote starts at an FPDU (CRC off, no markers:
            // 2 + ULPDU_Length + pad + 4 octets each, RFC 5044 §4.1), which Wireshark's MPA dissector needs
            int replyLength = 20 + ((s2c[18] & 0xFF) << 8 | (s2c[19] & 0xFF));
            java.util.Set<Long> starts = new java.util.HashSet<>();
            for (long off = replyLength; off < s2c.length; ) {
                starts.add(off);
                int ulpdu = (s2c[(int) off] & 0xFF) << 8 | (s2c[(int) off + 1] & 0xFF);
                off += 2 + ulpdu + (4 - (2 + ulpdu) % 4) % 4 + 4;
            }
            for (dev.iwarp.testkit.TcpStream.Chunk chunk : conn.serverToClient().chunks()) {
                if (chunk.offset() >= replyLength) {
                    assertTrue(starts.contains(chunk.offset()), "packet at offset " + chunk.offset()
                            + " starts inside an FPDU");
                }
            }
        }
    }
}
