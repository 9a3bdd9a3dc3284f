package dev.iwarp.bootstrap;

import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.ddp.llp.Placement;
import dev.iwarp.ddp.llp.UlpduDelivery;
import dev.iwarp.ddp.llp.UlpduReceiver;
import dev.iwarp.framing.UlpduSink;
import io.netty.buffer.ByteBuf;

/**
 * DDP's receive contract ({@link UlpduReceiver}) as a framing's (MPA's, IFT's) {@link UlpduSink}: a ULPDU header the framer
 * hands over early is answered with a view of the destination the receiver names (the framer reads the
 * payload from the socket into it); a destination without such a view, "deliver" and "discard" wait for
 * the whole ULPDU, which is then finished with the answer already given. Confined to the event loop.
 */
final class ReceiverSink implements UlpduSink {
    private final UlpduReceiver receiver;
    /** The answer to a header handed over early whose ULPDU comes whole; null when none is pending. */
    private Placement answered;
    private int answeredHeaderLength;

    ReceiverSink(UlpduReceiver receiver) {
        this.receiver = receiver;
    }

    @Override
    public int headerLength(int firstOctet) {
        // RFC 5041 §4.2-§4.3: the T bit decides the header
        return (firstOctet & DdpSegment.FLAG_TAGGED) != 0 ? DdpTaggedSegment.HEADER_LENGTH
                : DdpUntaggedSegment.HEADER_LENGTH;
    }

    @Override
    public ByteBuf payloadDestination(ByteBuf ulpdu, int headerLength, int payloadLength) {
        Placement p = receiver.onHeader(ulpdu, headerLength, payloadLength);
        if (p.kind() == Placement.Kind.PLACE) {
            ByteBuf view = p.target().view(p.offset(), payloadLength);
            if (view != null) {
                return view;
            }
        }
        answered = p;
        answeredHeaderLength = headerLength;
        return null;
    }

    @Override
    public void placed() {
        receiver.onPlaced();
    }

    @Override
    public void ulpdu(ByteBuf ulpdu) {
        Placement p = answered;
        if (p == null) {
            UlpduDelivery.deliver(ulpdu, receiver);
            return;
        }
        answered = null;
        UlpduDelivery.complete(p, ulpdu, answeredHeaderLength, receiver);
    }
}
