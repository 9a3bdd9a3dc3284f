/**
 * The RDMAP engine (RFC 5040, RFC 7306): what carries out the verbs of {@link dev.iwarp.verbs} on one stream,
 * above DDP and any framing that honours the lower-layer contract ({@link dev.iwarp.ddp.llp}). Its one public
 * type is {@link dev.iwarp.rdmap.engine.RdmaEngine}, the {@code ChannelHandler} a pipeline adds; its parts
 * (requester, responder, receiver, transmitter, stream state) are package-private. It reaches what
 * {@link dev.iwarp.verbs} keeps package-private only through {@link dev.iwarp.verbs.internal}.
 */
package dev.iwarp.rdmap.engine;
