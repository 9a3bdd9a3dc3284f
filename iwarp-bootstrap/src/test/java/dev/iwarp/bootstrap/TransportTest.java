package dev.iwarp.bootstrap;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Transport names, availability and the one-line reasons; io_uring on this kernel. */
class TransportTest {
    @Test
    void parsesCommandLineNames() {
        assertEquals(Transport.NIO, Transport.parse("nio"));
        assertEquals(Transport.EPOLL, Transport.parse("EPOLL"));
        assertEquals(Transport.IO_URING, Transport.parse("io_uring"));
        assertEquals(Transport.IO_URING, Transport.parse("io-uring"));
        assertEquals("io_uring", Transport.IO_URING.cliName());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Transport.parse("kqueue"));
        assertEquals("unknown transport kqueue: nio, epoll or io_uring", e.getMessage());
    }

    @Test
    void nioRunsEverywhere() {
        assertNull(Transport.NIO.unavailableReason());
        Transport.NIO.checkAvailable();
    }

    @Test
    void autoNeverPicksIoUring() {
        assertTrue(Transport.auto() == Transport.EPOLL || Transport.auto() == Transport.NIO);
    }

    @Test
    void anUnavailableTransportFailsTheBuildWithItsReason() {
        // whichever native transport this machine cannot run: the builder says why in one line
        for (Transport t : Transport.values()) {
            String why = t.unavailableReason();
            if (why != null) {
                IllegalStateException e = assertThrows(IllegalStateException.class,
                        () -> IwarpStack.builder().transport(t).threads(1).build());
                assertEquals(why, e.getMessage());
                assertEquals(1, why.lines().count(), why);
            }
        }
    }

    @Test
    void ioUringRunsOnThisKernel() throws Exception {
        // the io_uring jars are on the test class path (a test dependency), so only the kernel can refuse
        String why = Transport.IO_URING.unavailableReason();
        assumeTrue(why == null, why);
        try (IwarpStack stack = IwarpStack.builder().transport(Transport.IO_URING).threads(1).build()) {
            assertEquals(Transport.IO_URING, stack.transport());
            assertEquals(io.netty.channel.uring.IoUringSocketChannel.class, Transport.IO_URING.socketChannel());
        }
    }
}
