package dev.iwarp.mpa;

import io.netty.channel.Channel;
import io.netty.util.concurrent.FastThreadLocal;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketAddress;
import java.net.SocketException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Finds the EMSS (largest TCP payload per segment) of a connection for the MULPDU formula of
 * RFC 5044 §4.5: a configured value; else TCP_MAXSEG where the transport exposes it (Linux epoll's
 * TCP_INFO snd_mss); else, where it does not (NIO), the MTU of the local interface the connection
 * uses less the IP and TCP headers and the TCP timestamp option (on loopback, MTU 65536, this is what
 * snd_mss reports; elsewhere the peer's MSS may be smaller, and then FPDUs merely straddle segments,
 * which every receiver handles); else {@link MpaSettings#DEFAULT_EMSS}.
 */
final class Emss {
    private static final boolean EPOLL_PRESENT = present("io.netty.channel.epoll.EpollSocketChannel");
    /** TCP_INFO readings (getsockopt calls) made so far in this JVM, by every connection. */
    private static final AtomicLong TCP_INFO_READS = new AtomicLong();

    private Emss() {
    }

    static int of(Channel channel, int configured) {
        if (configured > 0) {
            return configured;
        }
        int mss = current(channel);
        if (mss > 0) {
            return mss;
        }
        int fromMtu = fromInterfaceMtu(channel.localAddress());
        return fromMtu > 0 ? fromMtu : MpaSettings.DEFAULT_EMSS;
    }

    /**
     * The EMSS as the transport reports it now (epoll's TCP_INFO snd_mss), or -1 where it does not:
     * what {@link MpaFramer#mulpdu()} follows when no EMSS was configured.
     */
    static int current(Channel channel) {
        return EPOLL_PRESENT ? EpollMss.of(channel) : -1;
    }

    /** TCP_INFO readings (getsockopt calls) made so far in this JVM: a count for tests. */
    static long tcpInfoReads() {
        return TCP_INFO_READS.get();
    }

    /** IPv4 20 or IPv6 40 octets, TCP 20, and the 12-octet timestamp option Linux sends by default. */
    static int fromInterfaceMtu(SocketAddress local) {
        if (!(local instanceof InetSocketAddress) || ((InetSocketAddress) local).getAddress() == null) {
            return -1;
        }
        InetAddress address = ((InetSocketAddress) local).getAddress();
        try {
            NetworkInterface nif = NetworkInterface.getByInetAddress(address);
            int mtu = nif == null ? -1 : nif.getMTU();
            if (mtu <= 0) {
                return -1;
            }
            int emss = mtu - (address instanceof Inet6Address ? 40 : 20) - 20 - 12;
            return emss > 0 ? Math.min(emss, 0xFFFF) : -1;
        } catch (SocketException | RuntimeException e) {
            return -1;
        }
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, Emss.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** Kept in its own class so the epoll types are only linked when present. */
    private static final class EpollMss {
        /** TCP_INFO is read into one object per event loop thread (not a new one per query). */
        private static final FastThreadLocal<io.netty.channel.epoll.EpollTcpInfo> INFO = new FastThreadLocal<>() {
            @Override
            protected io.netty.channel.epoll.EpollTcpInfo initialValue() {
                return new io.netty.channel.epoll.EpollTcpInfo();
            }
        };

        static int of(Channel channel) {
            if (channel instanceof io.netty.channel.epoll.EpollSocketChannel && channel.isActive()) {
                try {
                    TCP_INFO_READS.incrementAndGet();
                    return (int) ((io.netty.channel.epoll.EpollSocketChannel) channel).tcpInfo(INFO.get()).sndMss();
                } catch (RuntimeException e) {
                    return -1;
                }
            }
            return -1;
        }
    }
}
