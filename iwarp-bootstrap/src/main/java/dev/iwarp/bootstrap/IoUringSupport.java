package dev.iwarp.bootstrap;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.socket.SocketChannel;

/**
 * {@link Transport#IO_URING}'s Netty classes, kept out of {@link Transport} so that they are linked only when
 * io_uring is asked for: {@code netty-transport-classes-io_uring} is an optional dependency of this library.
 */
final class IoUringSupport {
    private static final String PROBE = "io.netty.channel.uring.IoUring";

    private IoUringSupport() {
    }

    static String unavailableReason() {
        try {
            Class.forName(PROBE, false, IoUringSupport.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return "the io_uring transport is not on the class path: add io.netty:netty-transport-native-io_uring "
                    + "with the classifier of this platform (e.g. linux-x86_64)";
        }
        return Probe.reason();
    }

    static IoHandlerFactory ioHandlerFactory() {
        return Probe.factory();
    }

    static Class<? extends SocketChannel> socketChannel() {
        return io.netty.channel.uring.IoUringSocketChannel.class;
    }

    static Class<? extends ServerChannel> serverChannel() {
        return io.netty.channel.uring.IoUringServerSocketChannel.class;
    }

    /** Loaded only once the classes are known to be present. */
    private static final class Probe {
        static String reason() {
            if (io.netty.channel.uring.IoUring.isAvailable()) {
                return null;
            }
            return "the io_uring transport is not available here (" + Transport.cause(
                    io.netty.channel.uring.IoUring.unavailabilityCause()) + "): it needs Linux 5.14 or later with "
                    + "io_uring allowed (sysctl kernel.io_uring_disabled = 0, no seccomp filter refusing it) and "
                    + "io.netty:netty-transport-native-io_uring for this platform";
        }

        static IoHandlerFactory factory() {
            return io.netty.channel.uring.IoUringIoHandler.newFactory();
        }
    }
}
