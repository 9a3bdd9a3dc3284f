package dev.iwarp.bootstrap;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

import java.util.Locale;

/**
 * The Netty transport: native epoll when present (and it exposes TCP_MAXSEG for MULPDU), else NIO; io_uring
 * only when asked for. The epoll and io_uring natives are optional dependencies: a transport whose native
 * library is absent, or that the kernel refuses, fails {@link #checkAvailable()} with a one-line reason.
 */
public enum Transport {
    /** Java NIO: everywhere. */
    NIO,
    /** Netty's native epoll transport: Linux only; exposes TCP_MAXSEG. */
    EPOLL,
    /**
     * Netty's io_uring transport ({@code io.netty:netty-transport-native-io_uring}, linux-x86_64 or
     * linux-aarch_64, on a kernel that allows io_uring): never chosen by {@link #auto()}. MPA's EMSS on it
     * comes from the interface MTU, as on NIO.
     */
    IO_URING;

    /** EPOLL when the native library loads here, else NIO. */
    public static Transport auto() {
        return Epoll.isAvailable() ? EPOLL : NIO;
    }

    /** The transport of a command-line name: nio, epoll or io_uring (also io-uring, iouring); any case. */
    public static Transport parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT).replace('-', '_');
        return switch (n) {
            case "nio" -> NIO;
            case "epoll" -> EPOLL;
            case "io_uring", "iouring", "uring" -> IO_URING;
            default -> throw new IllegalArgumentException("unknown transport " + name + ": nio, epoll or io_uring");
        };
    }

    /** The command-line name: nio, epoll or io_uring. */
    public String cliName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Why this transport cannot run here (its native library is absent, or the kernel refuses it), or null. */
    public String unavailableReason() {
        return switch (this) {
            case NIO -> null;
            case EPOLL -> Epoll.isAvailable() ? null
                    : "the epoll transport is not available here (" + cause(Epoll.unavailabilityCause())
                    + "): it needs Linux and io.netty:netty-transport-native-epoll for this platform on the class path";
            case IO_URING -> IoUringSupport.unavailableReason();
        };
    }

    /** Throws {@link IllegalStateException} with {@link #unavailableReason()} when this transport cannot run here. */
    public void checkAvailable() {
        String why = unavailableReason();
        if (why != null) {
            throw new IllegalStateException(why);
        }
    }

    /** Netty's I/O handler factory of this transport (event loops), after {@link #checkAvailable()}. */
    public IoHandlerFactory ioHandlerFactory() {
        return switch (this) {
            case NIO -> NioIoHandler.newFactory();
            case EPOLL -> EpollIoHandler.newFactory();
            case IO_URING -> IoUringSupport.ioHandlerFactory();
        };
    }

    /** Netty's client socket channel class of this transport. */
    public Class<? extends SocketChannel> socketChannel() {
        return switch (this) {
            case NIO -> NioSocketChannel.class;
            case EPOLL -> EpollSocketChannel.class;
            case IO_URING -> IoUringSupport.socketChannel();
        };
    }

    /** Netty's server socket channel class of this transport. */
    public Class<? extends ServerChannel> serverChannel() {
        return switch (this) {
            case NIO -> NioServerSocketChannel.class;
            case EPOLL -> EpollServerSocketChannel.class;
            case IO_URING -> IoUringSupport.serverChannel();
        };
    }

    static String cause(Throwable t) {
        if (t == null) {
            return "no cause given";
        }
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String m = root.getMessage();
        return root.getClass().getSimpleName() + (m == null ? "" : ": " + m.lines().findFirst().orElse(""));
    }
}
