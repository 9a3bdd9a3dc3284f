/**
 * The lower-layer contract: what DDP and RDMAP need from the framing below them (RFC 5041 §3,
 * "Reliable Delivery LLP Requirements"), stated once so that MPA, IFT, the SCTP adaptation and any
 * later framing carry the same RDMA core unchanged.
 *
 * <p>A framing delivers whole ULPDUs upward, one {@link io.netty.buffer.ByteBuf} per framing unit
 * (MPA FPDU, IFT frame, SCTP message), in order, each holding exactly one DDP segment; it takes
 * ULPDUs downward (a {@code ByteBuf}, ownership passes to it). Around that it owes the layers above:
 * <ul>
 *   <li>one {@link dev.iwarp.ddp.llp.LlpStartupEvent} when its startup ends, carrying on success the
 *       negotiated {@link dev.iwarp.ddp.llp.LlpParameters} (role, MULPDU source, DDP/RDMAP version,
 *       IRD/ORD, the RTR message, the peer's private data, and the framing's own parameters as a
 *       typed extra) and the {@link dev.iwarp.ddp.llp.LowerLayer} handle;</li>
 *   <li>errors as {@link dev.iwarp.ddp.llp.LlpException}, each naming the Terminate Layer 2
 *       EType/code and whether the stream can still carry that Terminate;</li>
 *   <li>{@link dev.iwarp.ddp.llp.LowerLayer#closeAfterFlush()}: flush what is queued, then close.</li>
 * </ul>
 * The framing modules never import this package: a small adapter in {@code iwarp-bootstrap} turns a
 * framing's own startup event and exceptions into these types.
 */
package dev.iwarp.ddp.llp;
