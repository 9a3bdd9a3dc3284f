package dev.iwarp.testkit;

import dev.iwarp.framing.DirectReadAllocator;
import io.netty.channel.Channel;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One side's socket reads over real sockets, summed over its channels, each counted by a
 * {@link DirectReadAllocator} of its own: the octets read straight into their destination and the reads made.
 * A copy count per received payload octet follows from them: every octet is copied once by the kernel into the
 * buffer a socket read names; a payload octet read into any other buffer than its destination is copied a
 * second time into its region or posted receive, one read into its destination is not. So
 * {@code 2 - D / P} for P payload octets received, D of them read straight into their destination
 * ({@link DirectReadAllocator#octetsReadDirectly()}).
 */
public final class DirectReads {
    private final List<DirectReadAllocator> channels = new CopyOnWriteArrayList<>();

    /** Counts {@code ch}'s reads from now on; a channel hook, run before the channel's first read. */
    public void count(Channel ch) {
        DirectReadAllocator d = new DirectReadAllocator(ch.config().getRecvByteBufAllocator());
        channels.add(d);
        ch.config().setRecvByteBufAllocator(d);
    }

    /** Octets read straight into their destination so far. */
    public long octets() {
        return channels.stream().mapToLong(DirectReadAllocator::octetsReadDirectly).sum();
    }

    /** Socket reads so far: every read call, those that found the socket empty included. */
    public long reads() {
        return channels.stream().mapToLong(d -> d.socketReads() + d.emptyReads()).sum();
    }

    /** Socket reads so far that found the socket empty. */
    public long empty() {
        return channels.stream().mapToLong(DirectReadAllocator::emptyReads).sum();
    }

    /** The counts as they are now: a phase of a measurement starts here. */
    public Phase phase() {
        return new Phase(this, octets(), reads(), empty());
    }

    /**
     * A phase of a measurement: {@code side}'s counts since they were {@code octetsBefore}, {@code readsBefore} and
     * {@code emptyBefore}.
     */
    public record Phase(DirectReads side, long octetsBefore, long readsBefore, long emptyBefore) {
        /** Copies per received payload octet in this phase, {@code payloadOctets} received: {@code 2 - D / P}. */
        public double copiesPerOctet(long payloadOctets) {
            return 2 - (double) (side.octets() - octetsBefore) / payloadOctets;
        }

        /** Socket reads in this phase per 64 KiB of the {@code payloadOctets} received. */
        public double readsPer64KiB(long payloadOctets) {
            return (side.reads() - readsBefore) / ((double) payloadOctets / 65536);
        }

        /** Socket reads in this phase that found the socket empty, per 64 KiB of the {@code payloadOctets} received. */
        public double emptyPer64KiB(long payloadOctets) {
            return (side.empty() - emptyBefore) / ((double) payloadOctets / 65536);
        }
    }
}
