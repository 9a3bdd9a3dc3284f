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

/** The Netty transport: native epoll when present (and it exposes TCP_MAXSEG for MULPDU), else NIO. */
public enum Transport {
    /** Java NIO: everywhere. */
    NIO,
    /** Netty's native epoll transport: Linux only; exposes TCP_MAXSEG. */
    EPOLL;

    /** EPOLL when the native library loads here, else NIO. */
    public static Transport auto() {
        return Epoll.isAvailable() ? EPOLL : NIO;
    }

    IoHandlerFactory ioHandlerFactory() {
        return this == EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    }

    Class<? extends SocketChannel> socketChannel() {
        return this == EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    Class<? extends ServerChannel> serverChannel() {
        return this == EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }
}
