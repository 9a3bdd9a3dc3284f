package dev.iwarp.server;

import dev.iwarp.mpa.MpaSettings;

import java.util.concurrent.TimeUnit;

/**
 * What serve's MPA Responder negotiates beyond what every framing shares ({@link ServerConfig}): serve's
 * {@code --crc}, {@code --markers}, {@code --mpa-rev} and {@code --p2p}. Other framings have none of these. Immutable.
 *
 * @param crc         force CRC (Reply C=1); otherwise the Reply echoes the Request's C bit, as siw does (RFC 5044
 *                    §7.1.1: either end's C=1 makes CRC used in both directions)
 * @param markers     ask the peer for markers (Reply M=1; siw refuses them)
 * @param revision    highest MPA revision accepted (1 or 2)
 * @param peerToPeer  accept RFC 6581 peer-to-peer
 */
public record ServerMpaOptions(boolean crc, boolean markers, int revision, boolean peerToPeer) {
    public ServerMpaOptions {
        if (revision != 1 && revision != 2) {
            throw new IllegalArgumentException("MPA revision must be 1 or 2: " + revision);
        }
    }

    /** serve's defaults: the client decides CRC, no markers asked, Rev 2, peer-to-peer accepted. */
    public static ServerMpaOptions defaults() {
        return new ServerMpaOptions(false, false, 2, true);
    }

    /**
     * The MPA Responder settings these options mean with what {@code config} gives every framing: its IRD and ORD,
     * its startup timeout and whether a Request asking for markers is served ({@link ServerLimits#allowMarkers()}).
     */
    public MpaSettings settings(ServerConfig config) {
        return MpaSettings.builder().revision(revision).crc(crc).markers(markers)
                .acceptMarkers(config.limits().allowMarkers()).ird(config.ird()).ord(config.ord())
                .acceptPeerToPeer(peerToPeer).startupTimeout(config.startupTimeoutMs(), TimeUnit.MILLISECONDS).build();
    }
}
