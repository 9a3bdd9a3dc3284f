package dev.iwarp.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.CoalescingBufferQueue;
import io.netty.handler.pcap.PcapWriteHandler;

import java.io.BufferedOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One pcap file for all connections (`serve --pcap FILE`, `demo --pcap FILE`): the global header
 * once, then a {@link PcapWriteHandler} on a shared stream at the bottom of every connection's
 * pipeline, with the writes of each flush joined into one packet.
 */
final class PcapFile implements AutoCloseable {
    private final OutputStream out;

    private PcapFile(OutputStream out) {
        this.out = out;
    }

    /**
     * Opens {@code file} and writes the pcap header through to it at once, so a file that cannot be written
     * fails here, at start, and not at the first packet or at shutdown.
     *
     * @throws IllegalArgumentException naming the file and the problem
     */
    static PcapFile create(Path file) {
        OutputStream out = null;
        try {
            out = new BufferedOutputStream(Files.newOutputStream(file));
            PcapWriteHandler.writeGlobalHeader(out);
            out.flush();
            return new PcapFile(out);
        } catch (IOException | RuntimeException e) {
            if (out != null) {
                try {
                    out.close();
                } catch (IOException ignored) {
                    // the write error below is the one to report
                }
            }
            String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            if (e instanceof java.nio.file.AccessDeniedException) {
                why = "permission denied";
            }
            throw new IllegalArgumentException("--pcap " + file + ": cannot write to it (" + why + ")", e);
        }
    }

    /** Adds the capture handler first in the channel's pipeline (it sees the TCP byte stream). */
    void install(Channel ch) {
        install(ch, true);
    }

    /**
     * Adds the capture handler last in the pipeline, as an {@code IwarpStack} framing hook: inside
     * TLS it then sits above the TLS handler and records the decrypted MPA stream (TCP/IP headers
     * synthesized from the connection's addresses), not the TLS records.
     */
    void installAboveTls(Channel ch) {
        install(ch, false);
    }

    private void install(Channel ch, boolean first) {
        // each handler closes its stream when its connection ends: give it a view whose close only flushes
        OutputStream shared = new FilterOutputStream(out) {
            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                out.write(b, off, len);
            }

            @Override
            public void close() throws IOException {
                flush();
            }
        };
        if (first) {
            ch.pipeline().addFirst("pcap-coalesce", new CoalesceWrites());
            ch.pipeline().addFirst("pcap", PcapWriteHandler.builder().sharedOutputStream(true).build(shared));
        } else {
            ch.pipeline().addLast("pcap", PcapWriteHandler.builder().sharedOutputStream(true).build(shared));
            ch.pipeline().addLast("pcap-coalesce", new CoalesceWrites());
        }
    }

    /**
     * PcapWriteHandler writes one packet per write, and the MPA framer writes an FPDU as several
     * buffers (length, payload, trailer) that TCP sends in one segment. Wireshark's MPA dissector
     * needs an FPDU to start in a segment of at least 8 octets, so such a capture would not decode
     * (interop/README.md). This joins the writes of each flush into one buffer, as the kernel
     * would; only present with --pcap.
     */
    static final class CoalesceWrites extends ChannelOutboundHandlerAdapter {
        private CoalescingBufferQueue pending;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            pending = new CoalescingBufferQueue(ctx.channel(), 8);
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (msg instanceof ByteBuf) {
                pending.add((ByteBuf) msg, promise);
            } else {
                writePending(ctx);
                ctx.write(msg, promise);
            }
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            writePending(ctx);
            ctx.flush();
        }

        @Override
        public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
            writePending(ctx);
            ctx.flush();
            ctx.close(promise);
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            pending.releaseAndFailAll(new IllegalStateException("pcap-coalesce removed"));
        }

        private void writePending(ChannelHandlerContext ctx) {
            if (!pending.isEmpty()) {
                ChannelPromise all = ctx.newPromise();
                ctx.write(pending.remove(pending.readableBytes(), all), all);
            }
        }
    }

    @Override
    public void close() {
        try {
            synchronized (out) {
                out.flush();
                out.close();
            }
        } catch (IOException e) {
            // at shutdown: one line, no stack trace
            org.slf4j.LoggerFactory.getLogger(PcapFile.class).warn("capture file: the last packets could not be written ({})",
                    e.getMessage());
        }
    }
}
