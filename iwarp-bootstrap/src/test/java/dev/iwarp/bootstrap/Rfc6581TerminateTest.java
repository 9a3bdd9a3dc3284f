package dev.iwarp.bootstrap;

import dev.iwarp.mpa.MpaErrorCode;
import dev.iwarp.mpa.MpaException;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.mpa.MpaStartupFrame;
import dev.iwarp.mpa.RtrType;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * RFC 6581 §3-§4 through {@link IwarpStack}: an Initiator that cannot accept the Reply's IRD/ORD
 * (error 6) or RTR choice (error 7) sends an RDMAP Terminate (Layer 2 LLP, EType 0 MPA, that code)
 * as its first FPDU, then closes. The Responder here is a plain socket that sends a crafted Reply and
 * records every octet that comes back.
 */
class Rfc6581TerminateTest {

    @Test
    void noMatchingRtrIsTerminate7OnTheWire() throws Exception {
        // Reply: C=1, enhanced, Rev 2, PD_Length 4; IRD word selects the Read RTR, which was not offered
        byte[] afterRequest = exchange(MpaSettings.builder().crc(true).peerToPeer(true).rtrTypes(RtrType.WRITE).build(),
                new byte[] {0x50, 0x02, 0x00, 0x04, (byte) 0x80, 0x10, 0x40, 0x10}, MpaErrorCode.NO_MATCHING_RTR);
        assertTerminate(afterRequest, 7);
    }

    @Test
    void insufficientIrdIsTerminate6OnTheWire() throws Exception {
        // Reply: the Responder's ORD 9 exceeds the largest IRD this Initiator can provide (8)
        byte[] afterRequest = exchange(MpaSettings.builder().crc(true).ird(4).maxIrd(8).build(),
                new byte[] {0x50, 0x02, 0x00, 0x04, 0x00, 0x04, 0x00, 0x09}, MpaErrorCode.INSUFFICIENT_IRD);
        assertTerminate(afterRequest, 6);
    }

    /** Connects with {@code settings}, answers the Request with {@code replyAfterKey}; returns what followed the Request. */
    private static byte[] exchange(MpaSettings settings, byte[] replyAfterKey, MpaErrorCode expected) throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             IwarpStack stack = IwarpStack.builder().threads(1).build()) {
            server.setSoTimeout(10_000);
            CompletableFuture<byte[]> peer = CompletableFuture.supplyAsync(() -> respond(server, replyAfterKey));
            ExecutionException e = assertThrows(ExecutionException.class, () -> stack.connect(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()),
                    ConnectOptions.of(stack.allocPd()).mpa(settings)).get(10, TimeUnit.SECONDS));
            assertEquals(expected, assertInstanceOf(MpaException.class, e.getCause()).errorCode());
            return peer.get(10, TimeUnit.SECONDS);
        }
    }

    private static byte[] respond(ServerSocket server, byte[] replyAfterKey) {
        try (Socket s = server.accept()) {
            s.setSoTimeout(10_000);
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] header = new byte[MpaStartupFrame.HEADER_LENGTH];
            in.readFully(header);
            in.readFully(new byte[(header[18] & 0xFF) << 8 | header[19] & 0xFF]); // the Request's private data
            ByteArrayOutputStream reply = new ByteArrayOutputStream();
            reply.writeBytes(MpaStartupFrame.Type.REPLY.key());
            reply.writeBytes(replyAfterKey);
            s.getOutputStream().write(reply.toByteArray());
            return readToEnd(in);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] readToEnd(InputStream in) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] b = new byte[256];
        for (int n; (n = in.read(b)) > 0; ) {
            out.write(b, 0, n);
        }
        return out.toByteArray(); // read() returned -1: the Initiator closed
    }

    /** One FPDU with a valid CRC whose ULPDU is a Terminate 2/0/code, and nothing else before the close. */
    private static void assertTerminate(byte[] wire, int code) {
        assertEquals(2 + 22 + 4, wire.length, "one FPDU: ULPDU_Length, 22 octets (no pad: 24 is a multiple of 4), CRC");
        assertEquals(22, (wire[0] & 0xFF) << 8 | wire[1] & 0xFF);
        CRC32C crc = new CRC32C();
        crc.update(wire, 0, wire.length - 4);
        assertEquals((int) crc.getValue(), Unpooled.wrappedBuffer(wire).getIntLE(wire.length - 4), "CRC32C (RFC 5044 §4.4)");
        assertArrayEquals(new byte[] {0x41, 0x47, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0},
                Arrays.copyOfRange(wire, 2, 20), "untagged, last, RDMAP Terminate, QN 2, MSN 1, MO 0");
        TerminateMessage t = TerminateMessage.decode(Unpooled.wrappedBuffer(wire, 20, 4));
        assertEquals(new TerminateCause(2, 0, code), t.cause());
        assertFalse(t.m() || t.d() || t.r());
    }
}
