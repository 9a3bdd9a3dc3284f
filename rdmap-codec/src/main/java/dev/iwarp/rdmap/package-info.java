/**
 * RDMAP wire layer (RFC 5040, RFC 7306): opcodes and the control octet, the RDMAP headers carried
 * in DDP segments (Read Request, Terminate, Immediate Data, Atomic Request/Response), the Terminate
 * causes of all layers, the atomic arithmetic, and builders of each message's DDP segments. No
 * protocol state: the per-connection engine and the verbs API build on this package.
 */
package dev.iwarp.rdmap;
