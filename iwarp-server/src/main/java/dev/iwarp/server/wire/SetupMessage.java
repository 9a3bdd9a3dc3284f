package dev.iwarp.server.wire;

import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.CompletionView;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * serve's setup message over a framing whose startup carries no private data ({@code Framing.carriesPrivateData()}
 * false: IFT, whose ULP agrees on everything before the adaption indications, IFT draft §4; the SCTP adaptation,
 * whose startup is its adaptation indication alone), one per connection. What MPA puts in the Reply's Private
 * Data (serve's target-region advertisement, possibly empty) travels as serve's first Send instead:
 * node B posts it right after accepting; node A has a receive for it posted before its phase 0, ahead
 * of the ULP's own receives, and treats the connection as set up once it arrived. Its completions
 * carry {@link #WR_ID} and never reach the ULP's listener.
 */
final class SetupMessage {
    /** The work request id of the setup Send and its receive (negative: never one of the tools' ids). */
    static final long WR_ID = Long.MIN_VALUE + 0x1F7;
    /** Largest setup message received; serve sends an {@code Advertisement} (16 octets) or nothing. */
    static final int MAX_LENGTH = 64;

    /** Null once released: a connection keeps its SetupMessage, and it must not keep the memory and region too. */
    private ByteBuf memory;
    private MemoryRegion mr;
    private final int length;
    /** Node A's message once received; null on node B, which only sends. */
    private final CompletableFuture<byte[]> received;
    /** Node B: the listener on the connection's close that releases the memory, removed when the Send completed. */
    private Channel channel;
    private ChannelFutureListener onClose;
    /** The framing's name, for the error when the message does not come ("IFT", "SCTP"). */
    private final String framing;
    private boolean released;

    private SetupMessage(ProtectionDomain pd, byte[] data, boolean receive, String framing) {
        this.framing = framing;
        received = receive ? new CompletableFuture<>() : null;
        length = receive ? MAX_LENGTH : data.length;
        // at most 64 octets, held until the Send completes: unpooled, since a pooled allocation on each event loop
        // makes the pool commit a whole chunk per arena for a few octets
        memory = Unpooled.directBuffer(Math.max(1, length), Math.max(1, length));
        memory.setZero(0, memory.capacity());
        if (!receive) {
            memory.setBytes(0, data);
        }
        mr = receive ? pd.register(memory, Access.LOCAL_WRITE) : pd.register(memory);
    }

    /**
     * Node A: a receive for the setup message, posted on {@code qp} before the ULP's receives (before the
     * connection exists: call {@link #await} or {@link #abandon} afterwards).
     */
    static SetupMessage receive(ProtectionDomain pd, QueuePair qp, String framing) {
        SetupMessage s = new SetupMessage(pd, null, true, framing);
        qp.postRecv(RecvRequest.of(WR_ID, s.mr.slice(0, MAX_LENGTH)));
        return s;
    }

    /** Node A, the connection failed or the message did not come: releases the receive's memory. */
    void abandon() {
        failed("abandoned");
    }

    /** Node B: sends {@code data} (at most {@link #MAX_LENGTH} octets) as the connection's first Send. */
    static SetupMessage send(ProtectionDomain pd, QueuePair qp, byte[] data) {
        if (data.length > MAX_LENGTH) {
            throw new IllegalArgumentException("setup data is at most " + MAX_LENGTH + " octets: " + data.length);
        }
        SetupMessage s = new SetupMessage(pd, data, false, null);
        s.channel = qp.channel();
        s.onClose = f -> s.release();
        s.channel.closeFuture().addListener(s.onClose);
        return s;
    }

    /**
     * Node B, just accepted on {@code qp}: sends {@code data} as {@code c}'s first Send, its completion kept from
     * {@code c}'s listener; returns {@code qp}.
     */
    static QueuePair postFirst(IwarpWire.Connection c, ProtectionDomain pd, QueuePair qp, byte[] data) {
        SetupMessage s = send(pd, qp, data);
        c.setup = s;
        s.post(qp);
        return qp;
    }

    /** Posts the Send of {@link #send}; call after the connection's {@code setup} field is set. */
    synchronized void post(QueuePair qp) {
        if (!released) { // not closed already
            qp.postSend(SendRequest.send(WR_ID, mr.slice(0, length)));
        }
    }

    /** Takes {@code c} when it is the setup message's; returns false for the ULP's completions. */
    boolean consume(CompletionView c) {
        if (c.wrId() != WR_ID) {
            return false;
        }
        byte[] b = null;
        synchronized (this) {
            if (!released && c.isSuccess() && received != null) {
                b = new byte[c.byteLength()];
                memory.getBytes(0, b);
            }
        }
        // released before the data is handed on: whoever sees the peer's setup data finds its region gone
        release();
        if (received != null) {
            if (b != null) {
                received.complete(b);
            } else {
                received.completeExceptionally(new IOException("setup message " + c.status()));
            }
        }
        return true;
    }

    /** Node B: whether this is the setup Send (one completion, then nothing is left to route). */
    boolean sends() {
        return received == null;
    }

    private void failed(String why) {
        if (received != null) {
            received.completeExceptionally(new IOException(why));
        }
        release();
    }

    private synchronized void release() {
        if (!released) {
            released = true;
            mr.deregister();
            memory.release();
            mr = null;
            memory = null;
            if (onClose != null) {
                channel.closeFuture().removeListener(onClose);
                onClose = null;
                channel = null;
            }
        }
    }

    /**
     * Node A, connected on {@code qp}: the setup message's octets once received, by {@code deadline}
     * ({@link System#nanoTime()}); otherwise closes the connection and throws.
     */
    byte[] await(QueuePair qp, InetSocketAddress server, long deadline) throws IOException {
        qp.channel().closeFuture().addListener(f -> failed("the connection closed"));
        long ms = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
        String why;
        try {
            return received.get(ms, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            why = e.getCause().getMessage();
        } catch (TimeoutException e) {
            why = "not within the timeout";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            why = "interrupted";
        }
        qp.channel().close();
        throw new IOException("cannot connect to " + Addresses.format(server) + ": no " + framing + " setup message (serve's first Send): " + why);
    }
}
