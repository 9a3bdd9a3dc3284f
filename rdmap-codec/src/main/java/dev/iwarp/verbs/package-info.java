/**
 * The verbs API (libibverbs names): what an application programs against to do RDMA Write, Read, Send and the
 * RFC 7306 operations from Java: {@link dev.iwarp.verbs.RdmaDevice}, {@link dev.iwarp.verbs.ProtectionDomain},
 * {@link dev.iwarp.verbs.MemoryRegion}, {@link dev.iwarp.verbs.QueuePair}, {@link dev.iwarp.verbs.CompletionQueue},
 * work requests and completions, the limits a server sets ({@link dev.iwarp.verbs.MemoryBudget}) and what it
 * reads back or plugs in to watch a stream. The engine that carries the verbs out is
 * {@link dev.iwarp.rdmap.engine}.
 */
package dev.iwarp.verbs;
