/**
 * The lower-layer contract: what DDP and RDMAP need from the framing below them (RFC 5041 §3,
 * "Reliable Delivery LLP Requirements"), stated once so that MPA, IFT, the SCTP adaptation and any
 * later framing carry the same RDMA core unchanged.
 *
 * <p>Transmit is one {@link dev.iwarp.ddp.llp.UlpduWriter#writeUlpdu} call per ULPDU (header octets,
 * payload, promise) that says whether it copied the payload. Receive carries placement, as siw's
 * receive path does: the framing hands the core each ULPDU's DDP header first
 * ({@link dev.iwarp.ddp.llp.UlpduReceiver#onHeader}), the core answers with the payload's destination
 * ({@link dev.iwarp.ddp.llp.Placement}), checked before a payload octet is placed, and the framing then
 * moves the payload there. No capability flags, no pipeline walks: MPA, IFT and the SCTP adaptation
 * offer the same calls. Around that a framing owes the layers above:
 * <ul>
 *   <li>one {@link dev.iwarp.ddp.llp.LlpStartupEvent} when its startup ends, carrying on success the
 *       negotiated {@link dev.iwarp.ddp.llp.LlpParameters} (role, MULPDU source, DDP/RDMAP version,
 *       IRD/ORD, the RTR message, the peer's private data, and the framing's own parameters as a
 *       typed extra) and the {@link dev.iwarp.ddp.llp.LlpStream} handle;</li>
 *   <li>errors as {@link dev.iwarp.ddp.llp.LlpException}, each naming the Terminate Layer 2
 *       EType/code and whether the stream can still carry that Terminate;</li>
 *   <li>{@link dev.iwarp.ddp.llp.LlpStream#closeAfterFlush()}: flush what is queued, then close.</li>
 * </ul>
 * The framing modules never import this package: a small adapter in {@code iwarp-bootstrap} turns a
 * framing's own startup event and exceptions into these types.
 */
package dev.iwarp.ddp.llp;
