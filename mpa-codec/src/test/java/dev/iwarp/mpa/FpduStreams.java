package dev.iwarp.mpa;

import dev.iwarp.testkit.ChannelOctets;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

/** The octets a sending {@link MpaFramer} puts on the wire, for the tests that feed a receiving one. */
final class FpduStreams {
    private FpduStreams() {
    }

    /**
     * The FPDUs of {@code ulpdus} as a sender frames them (RFC 5044 §4-§6): with CRC (§6) or its field sent as 0,
     * with markers (§5) or without.
     */
    static byte[] stream(boolean crc, boolean markers, byte[]... ulpdus) {
        EmbeddedChannel tx = new EmbeddedChannel(new MpaFramer(crc, markers, false, 65535, 65535, false));
        for (byte[] u : ulpdus) {
            tx.writeOutbound(Unpooled.wrappedBuffer(u));
        }
        byte[] wire = ChannelOctets.drainOutbound(tx);
        tx.finishAndReleaseAll();
        return wire;
    }
}
