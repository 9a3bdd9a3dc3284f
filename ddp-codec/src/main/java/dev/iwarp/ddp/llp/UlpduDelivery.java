package dev.iwarp.ddp.llp;

import dev.iwarp.ddp.DdpCodec;
import io.netty.buffer.ByteBuf;

/**
 * The receive contract driven for a framing that holds a whole ULPDU in a buffer when it hands it
 * over (the SCTP adaptation, whose channel delivers whole messages; IFT and MPA when a unit's payload
 * is already in their cumulation): header to the receiver, then the payload copied once to the
 * destination it named.
 */
public final class UlpduDelivery {
    private UlpduDelivery() {
    }

    /**
     * Hands {@code ulpdu} (its readable octets: one DDP header and its payload, CRC already checked by
     * the framing) to {@code receiver}. The caller keeps its reference and releases it afterwards; the
     * indices of {@code ulpdu} are unchanged.
     *
     * @throws dev.iwarp.ddp.DdpException when the ULPDU cannot hold the header its T bit announces
     */
    public static void deliver(ByteBuf ulpdu, UlpduReceiver receiver) {
        int headerLength = DdpCodec.headerLength(ulpdu);
        int payloadLength = ulpdu.readableBytes() - headerLength;
        complete(receiver.onHeader(ulpdu, headerLength, payloadLength), ulpdu, headerLength, receiver);
    }

    /**
     * Carries out {@code p}, the receiver's answer to the header of {@code ulpdu} (a whole ULPDU of
     * {@code headerLength} header octets, CRC checked): the payload copied once to its place, the ULPDU
     * delivered, or nothing. For a framing that asked earlier and holds the whole unit only now.
     */
    public static void complete(Placement p, ByteBuf ulpdu, int headerLength, UlpduReceiver receiver) {
        switch (p.kind()) {
            case PLACE:
                p.target().placeAt(p.offset(), ulpdu, ulpdu.readerIndex() + headerLength,
                        ulpdu.readableBytes() - headerLength);
                receiver.onPlaced();
                break;
            case DELIVER:
                receiver.onPayload(ulpdu);
                break;
            default: // DISCARD
        }
    }
}
