/**
 * Not API: hand-written Netty internals the RDMAP engine uses (a {@code ChannelPromise} it arms again per
 * request), each with its own contract test. They may change in any release.
 */
package dev.iwarp.rdmap.engine.internal;
