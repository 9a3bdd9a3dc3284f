package dev.iwarp.server.wire;

import dev.iwarp.vitcp.VitcpConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Closing a VI/TCP wire gives back the memory of regions still registered in the domains it allocated, as the iWARP
 * device does at its close: a region retains its buffer, and a client that ends without deregistering (a failed
 * connection, a tool that exits) otherwise leaves that reference unreleased (Netty's leak report, whose records
 * show the last segments gathered from the region).
 */
class VitcpWireCloseTest {
    private static final byte[] DISCRIMINATOR = "rping".getBytes(StandardCharsets.US_ASCII);

    @Test
    void closingTheClientWireDeregistersTheRegionsOfItsDomains() {
        ClientWire client = VitcpWire.client(VitcpConfig.builder().build(), DISCRIMINATOR);
        ByteBuf memory = Unpooled.directBuffer(64, 64);
        ByteBuf deregistered = Unpooled.directBuffer(64, 64);
        try {
            WireDomain domain = client.allocDomain();
            domain.register(memory, WireAccess.LOCAL_WRITE);
            client.allocDomain().register(deregistered, WireAccess.LOCAL_WRITE).deregister();
            assertEquals(2, memory.refCnt(), "a registered region holds a reference");
        } finally {
            client.close();
        }
        assertEquals(1, memory.refCnt(), "the wire's close deregistered the region: only the caller's reference left");
        assertEquals(1, deregistered.refCnt(), "a region deregistered before is not released twice");
        memory.release();
        deregistered.release();
    }

    @Test
    void closingTheServerWireDeregistersTheRegionsOfItsDomains() {
        ServerWire server = VitcpWire.server(VitcpConfig.builder().build(), DISCRIMINATOR, false, 1);
        ByteBuf memory = Unpooled.directBuffer(64, 64);
        try {
            server.allocDomain().register(memory, WireAccess.REMOTE_READ);
            assertEquals(2, memory.refCnt());
        } finally {
            server.close();
        }
        assertEquals(1, memory.refCnt(), "the wire's close deregistered the region");
        memory.release();
    }
}
