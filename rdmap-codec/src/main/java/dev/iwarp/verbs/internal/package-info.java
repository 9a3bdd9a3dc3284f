/**
 * Not API: how the RDMA engine and the verbs API reach each other without making either's internals public.
 * {@link dev.iwarp.verbs.internal.VerbsAccess} is the engine's access to what {@link dev.iwarp.verbs} keeps
 * package-private; {@link dev.iwarp.verbs.internal.QueuePairEngine} is what a {@link dev.iwarp.verbs.QueuePair}
 * hands its calls to. Applications never use these types; they may change in any release.
 */
package dev.iwarp.verbs.internal;
