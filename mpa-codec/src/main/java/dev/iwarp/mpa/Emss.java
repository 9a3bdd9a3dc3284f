package dev.iwarp.mpa;

import io.netty.channel.Channel;

/**
 * Finds the EMSS (largest TCP payload per segment) of a connection for the MULPDU formula of
 * RFC 5044 §4.5: TCP_MAXSEG where the transport exposes it (Linux epoll's TCP_INFO snd_mss), else
 * a configured or default value.
 */
final class Emss {
    private static final boolean EPOLL_PRESENT = present("io.netty.channel.epoll.EpollSocketChannel");

    private Emss() {
    }

    static int of(Channel channel, int configured) {
        if (configured > 0) {
            return configured;
        }
        if (EPOLL_PRESENT) {
            int mss = EpollMss.of(channel);
            if (mss > 0) {
                return mss;
            }
        }
        return MpaSettings.DEFAULT_EMSS;
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
        static int of(Channel channel) {
            if (channel instanceof io.netty.channel.epoll.EpollSocketChannel && channel.isActive()) {
                try {
                    return (int) ((io.netty.channel.epoll.EpollSocketChannel) channel).tcpInfo().sndMss();
                } catch (RuntimeException e) {
                    return -1;
                }
            }
            return -1;
        }
    }
}
