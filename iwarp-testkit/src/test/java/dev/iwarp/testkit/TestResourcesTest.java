package dev.iwarp.testkit;

import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a test opened is closed last first, then its buffers are released. */
class TestResourcesTest {

    @Test
    void closesInReverseOrderThenReleasesTheBuffers() throws Exception {
        List<String> order = new ArrayList<>();
        TestResources resources = new TestResources();
        ByteBuf b = resources.buffer(3, 7, 1);
        resources.closeAfter(() -> order.add("stack"));
        resources.closeAfter(() -> order.add("listener on the stack, closed first"));
        resources.closeAfter(() -> order.add("buffer still referenced: " + b.refCnt()));
        assertEquals(1, b.getByte(0));
        assertEquals(8, b.getByte(1));
        assertEquals(15, b.getByte(2));
        assertTrue(b.isDirect());
        resources.close();
        assertEquals(List.of("buffer still referenced: 1", "listener on the stack, closed first", "stack"), order);
        assertEquals(0, b.refCnt());
        resources.close(); // nothing twice
        assertEquals(3, order.size());
    }
}
