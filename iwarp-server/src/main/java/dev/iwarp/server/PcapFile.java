package dev.iwarp.server;

import io.netty.channel.Channel;
import io.netty.handler.pcap.PcapWriteHandler;

import java.io.BufferedOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One pcap file for all connections (`serve --pcap FILE`): the global header once, then a
 * {@link PcapWriteHandler} on a shared stream at the bottom of every connection's pipeline.
 */
final class PcapFile implements AutoCloseable {
    private final OutputStream out;

    private PcapFile(OutputStream out) {
        this.out = out;
    }

    static PcapFile create(Path file) throws IOException {
        OutputStream out = new BufferedOutputStream(Files.newOutputStream(file));
        PcapWriteHandler.writeGlobalHeader(out);
        return new PcapFile(out);
    }

    /** Adds the capture handler first in the channel's pipeline (it sees the TCP byte stream). */
    void install(Channel ch) {
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
        ch.pipeline().addFirst("pcap", PcapWriteHandler.builder().sharedOutputStream(true).build(shared));
    }

    @Override
    public void close() {
        try {
            synchronized (out) {
                out.flush();
                out.close();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
