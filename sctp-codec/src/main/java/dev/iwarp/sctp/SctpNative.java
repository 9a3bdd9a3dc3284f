package dev.iwarp.sctp;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;

import java.lang.reflect.Field;

/**
 * The Adaptation Layer Indication through native calls on a JDK SCTP channel's descriptor (the
 * JDK's SCTP API has no option for it; verified on Linux): set ours with {@code setsockopt(SCTP_ADAPTATION_LAYER)} and subscribe to
 * {@code SCTP_ADAPTATION_INDICATION} before the association starts; read the peer's from that
 * notification before the JDK's first receive (which would silently drop it). Linux, 64-bit, JNA.
 */
public final class SctpNative {
    static final int SOL_SCTP = 132;
    static final int SCTP_ADAPTATION_LAYER = 7;
    static final int SCTP_EVENT = 127;
    static final int SCTP_COMM_UP = 0x8001;
    static final int SCTP_ADAPTATION_INDICATION = 0x8007;
    static final int MSG_PEEK = 0x02;
    static final int MSG_DONTWAIT = 0x40;
    static final int MSG_NOTIFICATION = 0x8000;
    static final int EAGAIN = 11;
    private static final int NOTIFICATION_BUFFER = 256;
    /** Notifications consumed at most before giving up (COMM_UP and ours are the first two). */
    private static final int MAX_NOTIFICATIONS = 8;

    interface LibC extends Library {
        int setsockopt(int fd, int level, int option, Pointer value, int length);

        long recvmsg(int fd, Pointer msghdr, int flags);
    }

    private static final LibC LIBC;
    private static final String UNAVAILABLE;

    static {
        LibC lib = null;
        String why = null;
        if (!Platform.isLinux()) {
            why = "the native indication needs Linux (this is " + System.getProperty("os.name") + ")";
        } else if (Native.POINTER_SIZE != 8) {
            why = "the native indication needs a 64-bit JVM";
        } else {
            try {
                lib = Native.load("c", LibC.class);
            } catch (Throwable t) {
                why = "JNA cannot load the C library: " + t;
            }
        }
        LIBC = lib;
        UNAVAILABLE = why;
    }

    private SctpNative() {
    }

    /** {@code null} when native access works here, else why not (one line). */
    public static String unavailableReason() {
        return UNAVAILABLE;
    }

    /**
     * Sets our indication and subscribes to the peer's; call before connect (client) or bind/listen
     * (server). A value of 0 sends no parameter (Linux omits it).
     */
    public static void prepare(Object jdkChannel, int indication) {
        int fd = fd(jdkChannel);
        Memory v = new Memory(4);
        v.setInt(0, indication);
        check(LIBC.setsockopt(fd, SOL_SCTP, SCTP_ADAPTATION_LAYER, v, 4), "SCTP_ADAPTATION_LAYER");
        Memory event = new Memory(8); // struct sctp_event { sctp_assoc_t assoc; u16 type; u8 on; }
        event.clear();
        event.setInt(0, 0);
        event.setShort(4, (short) SCTP_ADAPTATION_INDICATION);
        event.setByte(6, (byte) 1);
        check(LIBC.setsockopt(fd, SOL_SCTP, SCTP_EVENT, event, 8), "SCTP_EVENT (adaptation indication)");
    }

    /**
     * After the association is up and before any JDK receive: consumes the notifications at the head
     * of the socket's queue (SCTP_COMM_UP, which the JDK only peeked, then ours) and returns the peer's
     * indication, or {@link SctpShimChannel#NO_INDICATION} when data or nothing follows instead.
     */
    public static long readPeerIndication(Object jdkChannel) {
        int fd = fd(jdkChannel);
        Memory buffer = new Memory(NOTIFICATION_BUFFER);
        Memory iov = new Memory(16);
        iov.setPointer(0, buffer);
        iov.setLong(8, NOTIFICATION_BUFFER);
        Memory msg = new Memory(56); // struct msghdr, LP64
        for (int i = 0; i < MAX_NOTIFICATIONS; i++) {
            msg.clear();
            msg.setPointer(16, iov);
            msg.setLong(24, 1);
            long n = LIBC.recvmsg(fd, msg, MSG_PEEK | MSG_DONTWAIT);
            if (n < 0) {
                int errno = Native.getLastError();
                if (errno == EAGAIN) {
                    return SctpShimChannel.NO_INDICATION;
                }
                throw new IllegalStateException("recvmsg(MSG_PEEK) on SCTP socket failed, errno " + errno);
            }
            if ((msg.getInt(48) & MSG_NOTIFICATION) == 0 || n < 8) {
                return SctpShimChannel.NO_INDICATION; // data first: the peer indicated nothing
            }
            int type = buffer.getShort(0) & 0xFFFF;
            long value = n >= 12 ? buffer.getInt(8) & 0xFFFFFFFFL : SctpShimChannel.NO_INDICATION;
            msg.clear();
            msg.setPointer(16, iov);
            msg.setLong(24, 1);
            if (LIBC.recvmsg(fd, msg, MSG_DONTWAIT) < 0) {
                throw new IllegalStateException("recvmsg on SCTP socket failed, errno " + Native.getLastError());
            }
            if (type == SCTP_ADAPTATION_INDICATION) {
                return value;
            }
        }
        return SctpShimChannel.NO_INDICATION;
    }

    /** The descriptor of a JDK SCTP channel ({@code sun.nio.ch.sctp.*ChannelImpl.fdVal}). */
    static int fd(Object jdkChannel) {
        if (UNAVAILABLE != null) {
            throw new IllegalStateException(UNAVAILABLE);
        }
        try {
            Field f = jdkChannel.getClass().getDeclaredField("fdVal");
            f.setAccessible(true);
            return f.getInt(jdkChannel);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot reach the SCTP socket's descriptor (the JVM needs "
                    + "--add-opens jdk.sctp/sun.nio.ch.sctp=ALL-UNNAMED): " + e, e);
        }
    }

    private static void check(int rc, String what) {
        if (rc != 0) {
            throw new IllegalStateException("setsockopt(" + what + ") failed, errno " + Native.getLastError());
        }
    }
}
