package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpOutboundMessage;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.rdmap.RdmapControl;
import dev.iwarp.rdmap.RdmapOpcode;
import io.netty.channel.ChannelPromise;

import java.util.ArrayList;
import java.util.List;

/**
 * A transmitter that sends nothing: it records each message the requester or responder hands it (opcode,
 * the first segment's STag for a tagged message, its promise) and releases its octets, so the two can be tested
 * without a channel underneath. {@link #sent(int)} completes a message's promise as its last write would.
 */
final class FakeTransmitter implements MessageTransmitter {
    /** One message handed over. */
    record Message(RdmapOpcode opcode, boolean tagged, int stag, int length, ChannelPromise done) {
    }

    final List<Message> messages = new ArrayList<>();
    int transmits;
    private final FlushPolicy flushPolicy;

    FakeTransmitter(Runnable flush) {
        flushPolicy = new FlushPolicy(flush);
    }

    @Override
    public void enqueue(DdpOutboundMessage m, ChannelPromise done) {
        RdmapOpcode op = RdmapOpcode.fromValue(RdmapControl.opcode(m.rsvdUlp()));
        int stag = 0;
        boolean first = true;
        while (m.hasNextSegment()) {
            DdpSegment s = m.nextSegment();
            if (first && s instanceof DdpTaggedSegment) {
                stag = ((DdpTaggedSegment) s).stag();
            }
            first = false;
            s.release();
        }
        messages.add(new Message(op, m.isTagged(), stag, m.length(), done));
        m.recycle();
    }

    @Override
    public void transmit(boolean flush) {
        transmits++;
    }

    @Override
    public void transmitPosted(boolean flush) {
        transmits++;
    }

    @Override
    public FlushPolicy flushPolicy() {
        return flushPolicy;
    }

    /** The messages of {@code op} handed over so far. */
    List<Message> of(RdmapOpcode op) {
        return messages.stream().filter(m -> m.opcode() == op).toList();
    }

    /** Message {@code i} left: its promise completes as its last write would. */
    void sent(int i) {
        ChannelPromise p = messages.get(i).done();
        if (p != null) {
            p.trySuccess();
        }
    }
}
