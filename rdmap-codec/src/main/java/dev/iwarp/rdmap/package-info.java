/**
 * RDMAP (RFC 5040, RFC 7306): opcodes, the RDMAP headers carried in DDP segments, the Terminate
 * message, and the per-connection engine.
 */
package dev.iwarp.rdmap;
