package dev.iwarp.ddp.llp;

import dev.iwarp.ddp.MulpduSource;

/**
 * The LLP Stream (RFC 5041's term for one connection or association of the lower layer protocol): the
 * operations DDP and RDMAP invoke on the framing below them, implemented by each framing's adapter:
 * transmit ({@link UlpduWriter}), receive ({@link #receiveWith}), MULPDU, graceful close.
 * No capability flags and no pipeline walks: every framing offers the same calls. All methods are
 * called on the stream's event loop.
 */
public interface LlpStream extends MulpduSource, UlpduWriter {

    /**
     * Graceful close: everything written so far goes out first, then the connection closes (for a
     * TCP framing a FIN after the last complete framing unit; RFC 5040 §6.2.1). Never produces an
     * empty framing unit. Idempotent.
     */
    void closeAfterFlush();

    /**
     * Why ULPDUs written now would not reach the wire before a close, or {@code null} when they
     * would. An MPA Responder holds its FPDUs until the first valid FPDU arrived (RFC 5044 §7.1.2
     * rule 4): until then a Terminate cannot be sent, and RDMAP says so instead of claiming it.
     */
    String transmitHoldReason();

    /**
     * From now on every ULPDU received goes to {@code receiver} (header first, then its payload where
     * the receiver says; {@link UlpduReceiver}) instead of up the pipeline. The core that consumes
     * DDP binds itself here once the startup event arrived; without a receiver, ULPDUs pass up the
     * pipeline as {@link io.netty.buffer.ByteBuf}s (for {@link dev.iwarp.ddp.DdpCodec} and tools).
     */
    void receiveWith(UlpduReceiver receiver);
}
