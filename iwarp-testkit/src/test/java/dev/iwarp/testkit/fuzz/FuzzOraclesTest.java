package dev.iwarp.testkit.fuzz;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The fuzz targets' oracles fail when they should: a leak, an untyped exception, a swallowed one. */
class FuzzOraclesTest {
    static final class ProtocolError extends IllegalStateException {
        ProtocolError(String m) {
            super(m);
        }
    }

    static final List<Class<? extends Throwable>> TYPED = List.of(ProtocolError.class);

    @BeforeEach
    void capture() {
        FuzzChecks.captureLogs();
    }

    @AfterEach
    void restore() {
        FuzzChecks.restoreLogs();
    }

    @Test
    void trackingAllocatorReportsABufferStillReferenced() {
        TrackingAllocator alloc = new TrackingAllocator();
        ByteBuf released = alloc.heapBuffer(8);
        ByteBuf kept = alloc.directBuffer(8);
        CompositeByteBuf composite = alloc.compositeBuffer();
        released.release();
        composite.release();
        AssertionError e = assertThrows(AssertionError.class, alloc::assertAllReleased);
        assertTrue(e.getMessage().startsWith("1 of 3 buffers"), e.getMessage());
        kept.release();
        assertDoesNotThrow(alloc::assertAllReleased, "forgotten after the check");
        ByteBuf tracked = alloc.track(io.netty.buffer.Unpooled.buffer(4));
        assertThrows(AssertionError.class, alloc::assertAllReleased, "a buffer made elsewhere, tracked");
        tracked.release();
    }

    @Test
    void typedErrorsPassDirectlyOrWrappedOnceByNetty() {
        assertTrue(FuzzChecks.isTyped(new ProtocolError("x"), TYPED));
        assertTrue(FuzzChecks.isTyped(new io.netty.handler.codec.DecoderException(new ProtocolError("x")), TYPED));
        assertFalse(FuzzChecks.isTyped(new IllegalStateException("x"), TYPED));
        assertFalse(FuzzChecks.isTyped(new RuntimeException(new ProtocolError("x")), TYPED),
                "only Netty's own wrapper is looked through");
        assertThrows(AssertionError.class, () -> FuzzChecks.assertTyped(new IndexOutOfBoundsException(), TYPED));
        assertDoesNotThrow(() -> FuzzChecks.assertTyped(null, TYPED));
    }

    @Test
    void aSwallowedUntypedExceptionLoggedByTheProjectFails() {
        org.slf4j.Logger log = LoggerFactory.getLogger("dev.iwarp.example.Handler");
        log.warn("peer sent garbage", new ProtocolError("bad frame"));
        log.info("not captured below WARN", new IOException("x"));
        assertDoesNotThrow(() -> FuzzChecks.assertNoUntypedLogged(TYPED));
        log.warn("closing after an unexpected error", new ArrayIndexOutOfBoundsException(3));
        AssertionError e = assertThrows(AssertionError.class, () -> FuzzChecks.assertNoUntypedLogged(TYPED));
        assertTrue(e.getMessage().contains("closing after an unexpected error"), e.getMessage());
        assertDoesNotThrow(() -> FuzzChecks.assertNoUntypedLogged(TYPED), "records are forgotten after a check");
    }

    @Test
    void inputReadsZerosPastTheEndAndSplitsCoverTheStream() {
        FuzzInput in = new FuzzInput(new byte[] {1, 2, 3});
        assertEquals(0x0102, in.u16());
        assertEquals(0x03000000, in.u32());
        assertFalse(in.hasMore());
        byte[] stream = new byte[100];
        for (int i = 0; i < stream.length; i++) {
            stream[i] = (byte) i;
        }
        for (int seed : new int[] {0, 1, 7, 255}) {
            java.io.ByteArrayOutputStream joined = new java.io.ByteArrayOutputStream();
            for (byte[] piece : FuzzInput.split(stream, seed)) {
                assertTrue(seed == 0 || piece.length <= seed, "piece of at most seed octets");
                joined.writeBytes(piece);
            }
            assertArrayEquals(stream, joined.toByteArray());
        }
    }
}
